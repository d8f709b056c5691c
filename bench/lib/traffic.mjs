// The synthetic traffic the benchmarks' audit trails are made of (bench/archive-verify.mjs,
// bench/lib/sar-trail.mjs): the clients and their shares, the operations naming a crn and
// theirs, and how a request ends. Each trail draws from its own seeded PRNG, in its own order.

export const CLIENTS = [
  // [client id, certificate serial, share of requests, acts on behalf of officers]
  ['probation-case-viewer', '4A0F129C33710B5EAA19C27D80416E93', 0.38, true],
  ['community-manager-app', '1B7E55A0C2D94F31B6E08A7D22C5F019', 0.2, true],
  ['risk-assessment-service', '7C3D90E14B2A6F85D01E9B3C47A8F260', 0.15, false],
  ['home-office-gateway', '2E9A41F07D6C35B8E4A1029F5B3D7C16', 0.12, false],
  ['court-bundle-builder', '5F18C3A92E7B40D6A95E1C0B83F4D27A', 0.1, true],
  ['mi-reporting', '0D6B27E84F1A93C5B72E0D4A16C9F385', 0.05, false],
];

export const OPERATIONS = [
  // [operation, share of the requests naming a crn]
  ['getCase', 0.55],
  ['getRiskScores', 0.17],
  ['getCommunityManagerByCrn', 0.15],
  ['getHomeOfficeInterest', 0.12],
  ['getSubjectAccessRequest', 0.01],
];

/** The row of `table` that `r` (0 to 1) falls in, by each row's share (its column `share`). */
export const pick = (table, share, r) => {
  let sum = 0;
  for (const row of table) {
    sum += row[share];
    if (r < sum) return row;
  }
  return table[table.length - 1];
};

/** A request naming a crn, ended by `s` (0 to 1): 3% not found, 1% limited access, 0.5% refused, else 200. */
export const outcomeOf = (s) =>
  s < 0.03
    ? [404, 'case-not-found']
    : s < 0.04
      ? [403, 'limited-access']
      : s < 0.045
        ? [403, 'permission-denied']
        : [200, null];

/**
 * A request naming no crn, over `base` (its time, id and client): a renewed certificate when
 * `r` is under 0.002 (its new serial from `serial()`), else a queue token.
 */
export function crnlessRecord(base, r, serial) {
  const renew = r < 0.002;
  return {
    ...base,
    onBehalfOf: null,
    operation: renew ? 'renewCertificate' : 'issueQueueToken',
    crn: null,
    status: 200,
    problem: null,
    issued: renew ? serial() : null,
  };
}
