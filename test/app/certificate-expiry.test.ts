import { describe, expect, it } from 'vitest';
import { CertificateExpiry } from '../../src/app/certificate-expiry.js';

const DAY = 86_400_000;
const START = new Date('2026-11-23T12:00:00Z');

function tracker() {
  let now = START;
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const series: Record<string, { subject: string; notAfter: Date }[]> = {};
  const clients: Record<string, Date> = {};
  const expiry = new CertificateExpiry({
    certificates: (certificate, entries) => {
      series[certificate] = [...entries];
    },
    client: (client, notAfter) => {
      clients[client] = notAfter;
    },
    warn: (fields, message) => warnings.push({ fields, message }),
    now: () => now,
  });
  return {
    expiry,
    warnings,
    series,
    clients,
    advance: (days: number) => {
      now = new Date(now.getTime() + days * DAY);
    },
  };
}

const server = (notAfter: Date, serialNumber = '01') => ({
  certificate: 'server',
  subject: 'localhost',
  serialNumber,
  notAfter,
});

describe('CertificateExpiry', () => {
  it('warns as each of 30, 14, 7 and 1 days is passed, then when expired, once per mark', () => {
    const t = tracker();
    t.expiry.set('server', [server(new Date(START.getTime() + 31 * DAY))]);
    expect(t.warnings).toEqual([]);
    const seen: string[] = [];
    for (let day = 0; day < 33; day++) {
      t.advance(1);
      t.expiry.check();
      t.expiry.check(); // the hourly check, again the same day
      seen.push(...t.warnings.splice(0).map((w) => `${w.fields.daysLeft} ${w.message}`));
    }
    expect(seen).toEqual([
      '30 certificate expires within 30 days',
      '14 certificate expires within 14 days',
      '7 certificate expires within 7 days',
      '1 certificate expires within 1 day',
      '0 certificate expired',
    ]);
  });

  it('warns at most once a day per certificate, and a reload of the same certificate does not warn again', () => {
    const t = tracker();
    const notAfter = new Date(START.getTime() + 20 * DAY);
    t.expiry.set('server', [server(notAfter)]);
    expect(t.warnings.map((w) => w.message)).toEqual(['certificate expires within 30 days']);
    t.advance(7); // 13 days left: the 14-day mark
    t.expiry.set('server', [server(notAfter)]);
    expect(t.warnings.map((w) => w.message)).toEqual([
      'certificate expires within 30 days',
      'certificate expires within 14 days',
    ]);
    // A new certificate is a new one: it starts afresh.
    t.expiry.set('server', [server(new Date(START.getTime() + 400 * DAY), '02')]);
    expect(t.series.server).toEqual([{ subject: 'localhost', notAfter: expect.any(Date) }]);
    expect(t.warnings).toHaveLength(2);
  });

  it('starting 5 days before the end gives one warning (7 days), not one per mark passed', () => {
    const t = tracker();
    t.expiry.set('server', [server(new Date(START.getTime() + 5 * DAY))]);
    expect(t.warnings.map((w) => w.message)).toEqual(['certificate expires within 7 days']);
    expect(t.warnings[0]?.fields).toMatchObject({ certificate: 'server', subject: 'localhost', daysLeft: 5 });
  });

  it('shows one series per CA subject, the earlier end when a name is held twice', () => {
    const t = tracker();
    const early = new Date(START.getTime() + 100 * DAY);
    const late = new Date(START.getTime() + 900 * DAY);
    t.expiry.set('client-ca', [
      { certificate: 'client-ca', subject: 'CA one', serialNumber: '01', notAfter: late },
      { certificate: 'client-ca', subject: 'CA one', serialNumber: '02', notAfter: early },
      { certificate: 'client-ca', subject: 'CA two', serialNumber: '03', notAfter: late },
    ]);
    expect(t.series['client-ca']).toEqual([
      { subject: 'CA one', notAfter: early },
      { subject: 'CA two', notAfter: late },
    ]);
  });

  it("records each client's presented certificate once per change, and warns of it", () => {
    const t = tracker();
    const soon = new Date(START.getTime() + 10 * DAY);
    expect(t.expiry.presented('client-a', '1F', soon)).toBe(true);
    expect(t.expiry.presented('client-a', '1F', new Date(soon))).toBe(false);
    expect(t.clients).toEqual({ 'client-a': soon });
    expect(t.warnings).toEqual([
      {
        fields: { client: 'client-a', serialNumber: '1F', notAfter: soon.toISOString(), daysLeft: 10 },
        message: 'certificate expires within 14 days',
      },
    ]);
    // Another certificate (rotated) is news, even with the same end, and warned of as its own.
    expect(t.expiry.presented('client-a', '2E', soon)).toBe(true);
    expect(t.warnings.map((w) => w.fields.serialNumber)).toEqual(['1F', '2E']);
  });
});
