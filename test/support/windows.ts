/**
 * Rate-limit windows chosen from the test's own start (issue 56). The limiter's fixed windows
 * are aligned to the epoch (a day's ends at midnight UTC, a minute's on the minute), and a
 * `serve` process counts by its own clock, which a test cannot hold still. So a test whose
 * requests must fall in one window, or whose counts must outlive its requests (Redis lets a
 * count go when its window ends), gives a window length for which the window running now has
 * `roomMs` left at least: never the clock's position, whatever it is.
 *
 * The length in whole minutes, as a duration (`1441m`): the first of `atLeastMs` (rounded up
 * to a minute), a minute more, and so on, whose window at `now` ends `roomMs` or more later.
 */
export function windowWithRoom(atLeastMs: number, roomMs: number, now = Date.now()): string {
  for (let minutes = Math.max(1, Math.ceil(atLeastMs / 60_000)); ; minutes++) {
    const windowMs = minutes * 60_000;
    if (windowMs - (now % windowMs) >= roomMs) return `${minutes}m`;
  }
}
