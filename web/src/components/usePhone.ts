import { useMediaQuery } from '@mantine/hooks';

/** Narrower than Mantine's `sm` (48em, where the menu becomes a burger): lists show cards and fold their filters. */
export const PHONE_QUERY = '(max-width: 47.99em)';

export function usePhone(): boolean {
  return useMediaQuery(PHONE_QUERY, typeof window !== 'undefined' && window.matchMedia(PHONE_QUERY).matches, { getInitialValueInEffect: false });
}
