import { describe, expect, it } from 'vitest';
import { CertificateSerial } from '../../src/domain/access/certificate-serial.js';
import { ClientName } from '../../src/domain/access/client-name.js';
import { QueueArn, RoleArn } from '../../src/domain/queue/arns.js';

describe('CertificateSerial', () => {
  it('reads every spelling of one serial as the same value', () => {
    for (const raw of ['4F1A09', '4f1a09', '4f:1a:09', '004F1A09', ' 00:4f:1a:09 ']) {
      expect(CertificateSerial.parse(raw)).toBe('4F1A09');
    }
    expect(CertificateSerial.parse('0')).toBe('0');
    expect(CertificateSerial.parse('00')).toBe('0');
  });

  it('refuses what is not 1-64 hex digits', () => {
    for (const raw of ['', ':', 'XYZ', '4F-1A', '0x4F', 'A'.repeat(65)]) {
      expect(CertificateSerial.tryParse(raw)).toBeUndefined();
      expect(() => CertificateSerial.parse(raw)).toThrow('a certificate serial is hexadecimal');
    }
    expect(CertificateSerial.tryParse('A'.repeat(64))).toBe('A'.repeat(64));
  });

  it('reads no letter that upper-cases to hex digits as a digit (found by test/property)', () => {
    // U+FB00 (ﬀ) upper-cases to "FF", U+FB03 (ﬃ) to "FFI".
    for (const raw of ['ﬀ', '4f:ﬀ', 'ﬀ01']) {
      expect(CertificateSerial.tryParse(raw)).toBeUndefined();
    }
    expect(CertificateSerial.tryParse('ff')).toBe('FF');
  });
});

describe('ClientName', () => {
  it('accepts 1-64 letters, digits, dot, underscore and hyphen, starting with a letter or digit', () => {
    for (const raw of ['a', 'client-a', 'Client_A.2', `x${'y'.repeat(63)}`])
      expect(ClientName.parse(raw)).toBe(raw);
  });

  it('refuses anything else, naming the rule', () => {
    for (const raw of ['', '-a', '.a', 'a b', 'a/b', 'a,b', 'a@b', `x${'y'.repeat(64)}`]) {
      expect(ClientName.tryParse(raw)).toBeUndefined();
      expect(() => ClientName.parse(raw)).toThrow('CN must be 1-64 characters');
    }
  });
});

describe('RoleArn and QueueArn', () => {
  it('accept their examples and refuse each other', () => {
    expect(RoleArn.tryParse(RoleArn.example)).toBe(RoleArn.example);
    expect(QueueArn.tryParse(QueueArn.example)).toBe(QueueArn.example);
    expect(RoleArn.tryParse(QueueArn.example)).toBeUndefined();
    expect(QueueArn.tryParse(RoleArn.example)).toBeUndefined();
  });

  it('refuse a wrong account number, partition or a FIFO role', () => {
    expect(RoleArn.tryParse('arn:aws:iam::12345678901:role/r')).toBeUndefined();
    expect(RoleArn.tryParse('arn:gcp:iam::123456789012:role/r')).toBeUndefined();
    expect(RoleArn.tryParse('arn:aws-us-gov:iam::123456789012:role/path/r')).toBeDefined();
    expect(QueueArn.tryParse('arn:aws:sqs:eu-west-2:123456789012:q.fifo')).toBeDefined();
    expect(QueueArn.tryParse('arn:aws:sqs:eu-west-2:123456789012:q.txt')).toBeUndefined();
  });
});
