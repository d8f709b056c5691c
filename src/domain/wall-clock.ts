// The wall clock of a time zone at an instant, by the platform's time zone rules.

/**
 * The wall clock of IANA time zone `zone` (`Europe/London`): for an instant (ms since the
 * epoch), the date and time its clocks show then, as if they were UTC (ms); the instant taken
 * from it is the offset in force, in ms. The zone's rules are the platform's
 * (`Intl.DateTimeFormat`, the tz database that Node, Bun and Deno ship): nothing here knows
 * when a clock changes. The formatter is made once, for every instant asked (making one costs
 * far more than using it). A zone the platform does not know throws a RangeError.
 */
export function wallClockOf(zone: string): (instant: number) => number {
  const format = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return (instant) => {
    const part: Record<string, number> = {};
    for (const p of format.formatToParts(instant)) if (p.type !== 'literal') part[p.type] = Number(p.value);
    return Date.UTC(
      part.year ?? 0,
      (part.month ?? 1) - 1,
      part.day ?? 1,
      part.hour ?? 0,
      part.minute ?? 0,
      part.second ?? 0,
    );
  };
}
