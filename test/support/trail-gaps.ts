import type { TrailGap } from '../../src/ports/disclosures.js';

/** Two losses of the trail, as continuation records state them: one from its start (from null), one after a kept record. */
export const GAPS: TrailGap[] = [
  { from: null, to: '2026-03-01T02:00:00.000Z', recordsLost: 7, reason: 'restored from the first backup' },
  {
    from: '2026-11-10T04:00:00.000Z',
    to: '2026-11-10T05:10:00.000Z',
    recordsLost: 212,
    reason: 'restored from the 04:00 backup (INC-1234)',
  },
];
