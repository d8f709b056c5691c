#!/usr/bin/env node
// node bench/upstream-reading.mjs [--bodies N]
//
// What reading one upstream body costs the upstream case store, in process: JSON.parse
// and the check, per body, in µs. `strict` is the service's own answer schema (how the store
// read an upstream before it read tolerantly); `reading` is the store's tolerant reading
// schema (src/adapters/upstream/reading.ts), for the same body, and for the recorded
// gateway and probation bodies that only it accepts (local times converted in
// Europe/London, absent fields filled in). Four rounds; the first warms up. Needs `npm run
// build`. The socket figure is `npm run bench -- upstream`.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const n = Number(args[args.indexOf('--bodies') + 1]) || 50_000;
const root = new URL('..', import.meta.url);
const json = (path) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));
const { RiskScoresPageSchema, PersonalDetailsAndCircumstancesSchema } = await import(
  new URL('dist/adapters/http/schemas.js', root).href
);
const { upstreamReading } = await import(new URL('dist/adapters/upstream/reading.js', root).href);
const reading = upstreamReading('Europe/London');

// The bench's case, as this service answers it (every field, date-times with offsets).
const fixture = json('fixtures/cases.json').cases.find((c) => c.crn === 'X123456');
const scores = fixture.riskScores;
const page = {
  data: scores,
  pagination: {
    isLastPage: true,
    count: scores.length,
    page: 1,
    perPage: 10,
    totalCount: scores.length,
    totalPages: 1,
  },
};
const targets = [
  ['case, strict', PersonalDetailsAndCircumstancesSchema, fixture.personalDetails],
  ['case, reading', reading.personalDetails.schema, fixture.personalDetails],
  ['risk scores, strict', RiskScoresPageSchema, page],
  ['risk scores, reading', reading.riskScoresPage.schema, page],
  [
    'probation case, reading',
    reading.personalDetails.schema,
    json('fixtures/upstream/probation-case.json').body,
  ],
  [
    'gateway risk scores, reading',
    reading.riskScoresPage.schema,
    json('fixtures/upstream/gateway-risk-scores.json').body,
  ],
].map(([name, schema, body]) => {
  const text = JSON.stringify(body);
  const checked = schema.safeParse(JSON.parse(text));
  if (!checked.success)
    throw new Error(`${name}: the body does not read (${checked.error.issues[0]?.message})`);
  return { name, schema, text };
});

for (let round = 1; round <= 4; round++) {
  const line = targets.map(({ name, schema, text }) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) schema.safeParse(JSON.parse(text));
    return `${name} ${(Number(process.hrtime.bigint() - started) / n / 1000).toFixed(2)} µs`;
  });
  process.stdout.write(`round ${round}: ${line.join(', ')}\n`);
}
