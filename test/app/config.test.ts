import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.js';

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config.HOST).toBe('127.0.0.1');
    expect(config.PORT).toBe(8443);
    expect(config.CASE_STORE).toEqual({ kind: 'sqlite', path: './data/cases.db' });
    expect(config.CRN_PATTERN.pattern).toBe('^[A-Z][0-9]{6}$');
    expect(config.LOG_LEVEL).toBe('info');
  });

  it('reads each variable', () => {
    const config = loadConfig({
      HOST: '::1',
      PORT: '0',
      CASE_STORE: 'memory',
      CRN_PATTERN: '^[A-Z]{2}[0-9]{4}$',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({ HOST: '::1', PORT: 0, CASE_STORE: { kind: 'memory' }, LOG_LEVEL: 'warn' });
    expect(config.CRN_PATTERN.accepts('AB1234')).toBe(true);
    expect(loadConfig({ CASE_STORE: 'sqlite:/tmp/x.db' }).CASE_STORE).toEqual({
      kind: 'sqlite',
      path: '/tmp/x.db',
    });
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', CASE_STORE: '' }).PORT).toBe(8443);
  });

  it.each([
    [{ PORT: 'eighty' }, /^PORT: PORT must be a port number 0\.\.65535$/],
    [{ PORT: '70000' }, /^PORT: /],
    [{ PORT: '-1' }, /^PORT: /],
    [{ CASE_STORE: 'mongodb://x' }, /^CASE_STORE: expected memory or sqlite:PATH$/],
    [{ CASE_STORE: 'sqlite:' }, /^CASE_STORE: sqlite: needs a file path/],
    [
      { CASE_STORE: 'https://upstream.example' },
      /^CASE_STORE: an upstream http\(s\) case store is not available/,
    ],
    [{ CRN_PATTERN: '[A-Z]+' }, /^CRN_PATTERN: crn pattern must be anchored/],
    [{ CRN_PATTERN: '^(.*$' }, /^CRN_PATTERN: crn pattern is not a valid regular expression/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent$/],
  ])('refuses %j, naming the variable', (env, message) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('names every bad variable at once', () => {
    expect(
      problemsOf({ PORT: 'x', LOG_LEVEL: 'y' })
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['LOG_LEVEL', 'PORT']);
  });

  it('never repeats a value back: a store URL may hold a password', () => {
    const problems = problemsOf({ CASE_STORE: 'postgres://svc:hunter2@db.internal/cases' });
    expect(problems.join()).toMatch(/PostgreSQL case store is not available/);
    expect(problems.join()).not.toContain('hunter2');
  });
});
