import { createContext, type ReactNode, useContext } from 'react';

/**
 * Which part of the app a screen is shown in: the operator console works on the operator API
 * (`/admin/v1`), the merchant cabinet on the merchant's own (`/merchant/v1`), which answers the
 * same shapes for the merchant's objects only. Screens shared by both read the API from here.
 */
export type Area = 'console' | 'merchant';

const AreaContext = createContext<Area>('console');

export function AreaProvider({ area, children }: { area: Area; children: ReactNode }) {
  return <AreaContext.Provider value={area}>{children}</AreaContext.Provider>;
}

export function useArea(): Area {
  return useContext(AreaContext);
}

/** The API the area's screens call. */
export function useApiBase(): '/admin/v1' | '/merchant/v1' {
  return useArea() === 'merchant' ? '/merchant/v1' : '/admin/v1';
}
