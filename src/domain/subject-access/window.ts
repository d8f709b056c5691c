/**
 * The window of a subject access request (decisions §22): `fromDate` and `toDate` as whole
 * days in Europe/London, both inclusive, read into the instants they span. An absent
 * `fromDate` is the start of the trail; an absent `toDate` is today, in London.
 */
import { InvalidSubjectAccessRequestError } from '../errors.js';
import { wallClockOf } from '../wall-clock.js';

/** The zone the estate's dates are days of. */
export const SAR_TIME_ZONE = 'Europe/London';

/** A window of instants: `from` inclusive (absent: the beginning), `to` exclusive. */
export interface SarWindow {
  readonly from?: Date;
  readonly to: Date;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** London's wall clock at an instant, as if it were UTC (ms): minus the instant, its offset. */
const londonWallClock = wallClockOf(SAR_TIME_ZONE);

/**
 * The instant London's day `utcMidnight` (that date's 00:00 UTC, ms) begins. Its clocks change
 * at 01:00 UTC, never between 23:00 and 00:00 UTC, so the offset in force at that date's 00:00
 * UTC is the one at its local midnight.
 */
const londonMidnight = (utcMidnight: number): number =>
  utcMidnight - (londonWallClock(utcMidnight) - utcMidnight);

/** `YYYY-MM-DD` as that date's 00:00 UTC (ms), or undefined when it is not a real date so written. */
function dayOf(text: string): number | undefined {
  const match = DAY.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const at = Date.UTC(year, month - 1, day);
  const back = new Date(at);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) {
    return undefined;
  }
  return at;
}

/** Today in London, as its date's 00:00 UTC (ms). */
const londonToday = (now: Date): number => {
  const wall = londonWallClock(now.getTime());
  return wall - (wall % DAY_MS);
};

/**
 * The window `fromDate` … `toDate` asks for; an InvalidSubjectAccessRequestError naming the
 * parameter for a date that is not `YYYY-MM-DD` (a real date), or `fromDate` after `toDate`.
 */
export function sarWindow(fromDate: string | undefined, toDate: string | undefined, now: Date): SarWindow {
  const parse = (name: string, text: string): number => {
    const day = dayOf(text);
    if (day === undefined) {
      throw new InvalidSubjectAccessRequestError(name, `${name} is not a date written YYYY-MM-DD`);
    }
    return day;
  };
  const from = fromDate === undefined ? undefined : parse('fromDate', fromDate);
  const to = toDate === undefined ? londonToday(now) : parse('toDate', toDate);
  if (from !== undefined && from > to) {
    throw new InvalidSubjectAccessRequestError('fromDate', 'fromDate is after toDate');
  }
  return {
    ...(from === undefined ? {} : { from: new Date(londonMidnight(from)) }),
    // The day after toDate begins where the window ends.
    to: new Date(londonMidnight(to + DAY_MS)),
  };
}
