import { useInterval } from '@mantine/hooks';
import { useEffect, useState } from 'react';

/** Whole seconds left until `until` (0 once it has passed), ticking every second. */
export function useSecondsLeft(until: string): number {
  const [now, setNow] = useState(Date.now());
  const interval = useInterval(() => setNow(Date.now()), 1000);
  useEffect(() => {
    interval.start();
    return interval.stop;
  }, [interval.start, interval.stop]);
  return Math.max(0, Math.floor((new Date(until).getTime() - now) / 1000));
}
