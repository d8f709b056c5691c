/**
 * Date-times a system of record sends without an offset (`2026-01-16T16:22:54`, a Java
 * `LocalDateTime` in UK local time), read in an IANA time zone and written with the offset in
 * force at that moment: `2026-01-16T16:22:54+00:00` in winter, `2025-07-01T10:00:00+01:00` in
 * summer.
 *
 * The zone's rules are the platform's (`Intl.DateTimeFormat`, the tz database that Node, Bun
 * and Deno ship): nothing here knows when a clock changes. At a change, a local time that
 * happens twice (the autumn hour) is the earlier instant, with the summer offset, and one that
 * never happens (the spring hour) is moved forward by the gap, as Temporal's `'compatible'`
 * disambiguation and Java's `LocalDateTime.atZone` both do: `2026-03-29T01:30:00` in London is
 * `2026-03-29T02:30:00+01:00`, and `2026-10-25T01:30:00` is `2026-10-25T01:30:00+01:00`.
 */
import { wallClockOf } from '../../domain/wall-clock.js';

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** How many days' (and hours') offsets a reader keeps. */
const MAX_SPANS_KEPT = 4096;

/**
 * Whether `zone` is an IANA time zone name the platform knows (`Europe/London`, `UTC`). A bare
 * offset (`+01:00`), which some engines take as a zone, is refused: it has no clock changes.
 */
export function isTimeZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const two = (n: number) => String(n).padStart(2, '0');

/** `+01:00` for 60 minutes, `-03:30` for -210. */
function offsetText(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}

/**
 * A converter for one zone: `toOffset(text)` answers `text` with its offset in the zone, or
 * `undefined` when `text` is not a local date-time of a real calendar day. Its wall clock
 * (the domain's, one formatter) is made once, and an offset once asked is kept.
 */
export function localDateTimeReader(zone: string): (text: string) => string | undefined {
  /** The zone's wall clock at instant `t`, as if it were UTC, in milliseconds. */
  const wallAt = wallClockOf(zone);
  // Asking the formatter is by far the dearest step (a conversion asks up to six times), and
  // a zone's offset changes a few times a year. So a span's offset is kept once asked: a
  // (UTC) day's, where it is the same at the day's first and last second, else (the day of a
  // change) each of its hours' likewise, else (the hour of the change) the instant's own.
  // `null` keeps "it changes in this span". 4096 days are about eleven years of dates; past
  // that they are forgotten and asked again.
  const days = new Map<number, number | null>();
  const hours = new Map<number, number | null>();
  const steady = (kept: Map<number, number | null>, span: number, t: number): number | null => {
    const key = Math.floor(t / span);
    let offset = kept.get(key);
    if (offset === undefined) {
      const first = key * span;
      const last = first + span - 1000;
      const atFirst = wallAt(first) - first;
      offset = wallAt(last) - last === atFirst ? atFirst : null;
      if (kept.size >= MAX_SPANS_KEPT) kept.clear();
      kept.set(key, offset);
    }
    return offset;
  };
  const offsetAt = (t: number): number =>
    steady(days, DAY_MS, t) ?? steady(hours, HOUR_MS, t) ?? wallAt(t) - t;

  return (text) => {
    const m = LOCAL.exec(text);
    if (m === null) return undefined;
    const [, y, mo, d, h, mi, s = '00', fraction = ''] = m;
    const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
    // A day that does not exist (2026-02-30) or an hour past 23 comes back as another day.
    const check = new Date(wall);
    if (
      Number.isNaN(wall) ||
      check.getUTCFullYear() !== Number(y) ||
      check.getUTCMonth() !== Number(mo) - 1 ||
      check.getUTCDate() !== Number(d) ||
      check.getUTCHours() !== Number(h) ||
      check.getUTCMinutes() !== Number(mi) ||
      check.getUTCSeconds() !== Number(s)
    ) {
      return undefined;
    }
    // The offsets in force a day either side: a clock change between them is the only one
    // near this time. Each is a candidate where it reproduces the wall clock.
    const before = offsetAt(wall - DAY_MS);
    const after = offsetAt(wall + DAY_MS);
    const fits = [before, after].filter((o) => offsetAt(wall - o) === o);
    // Twice (autumn): the earlier instant, the larger offset. Never (spring): the offset
    // before the change, which lands the gap's length later on the wall clock.
    const offset = fits.length > 0 ? Math.max(...fits) : before;
    const instant = wall - offset;
    const shown = new Date(instant + offsetAt(instant));
    const date = `${String(shown.getUTCFullYear()).padStart(4, '0')}-${two(shown.getUTCMonth() + 1)}-${two(shown.getUTCDate())}`;
    const time = `${two(shown.getUTCHours())}:${two(shown.getUTCMinutes())}:${two(shown.getUTCSeconds())}`;
    return `${date}T${time}${fraction}${offsetText(Math.round(offsetAt(instant) / 60_000))}`;
  };
}
