// The pieces of the webhook engine that are pure functions: address classification (the SSRF rules), the
// retry schedule, and signing (checked against the standardwebhooks library's own signer).
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { classifyAddress, hasUserinfo, isAllowedAddress } from '../src/net/destination-guard.ts';
import { retryDelayMs } from '../src/domain/webhooks/retry-schedule.ts';
import { generateWebhookSecret, signedHeaders } from '../src/domain/webhooks/signing.ts';
import { DOCUMENTED_TUNING } from '../src/domain/webhooks/tuning.ts';

describe('classifyAddress', () => {
  const cases: Array<[string, 'public' | 'internal' | 'forbidden']> = [
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['127.0.0.1', 'internal'],
    ['127.255.255.254', 'internal'],
    ['10.0.0.1', 'internal'],
    ['172.16.0.1', 'internal'],
    ['172.31.255.255', 'internal'],
    ['192.168.1.1', 'internal'],
    ['169.254.169.254', 'internal'],
    ['100.64.0.1', 'internal'],
    ['100.127.255.255', 'internal'],
    ['192.0.2.1', 'internal'],
    ['198.18.0.1', 'internal'],
    ['203.0.113.9', 'internal'],
    ['0.0.0.0', 'forbidden'],
    ['0.1.2.3', 'forbidden'],
    ['224.0.0.1', 'forbidden'],
    ['239.255.255.250', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    ['::1', 'internal'],
    ['[::1]', 'internal'],
    ['::', 'forbidden'],
    ['::ffff:127.0.0.1', 'internal'],
    ['::ffff:7f00:1', 'internal'],
    ['::ffff:8.8.8.8', 'internal'],
    ['::ffff:0.0.0.0', 'forbidden'],
    ['::127.0.0.1', 'internal'],
    ['64:ff9b::a00:1', 'internal'],
    ['fc00::1', 'internal'],
    ['fd12:3456::1', 'internal'],
    ['fe80::1', 'internal'],
    ['fe80::1%eth0', 'internal'],
    ['fec0::1', 'internal'],
    ['ff02::1', 'forbidden'],
    ['2001:db8::1', 'internal'],
    ['2001:0:4136:e378::1', 'internal'],
    ['2002:7f00:1::1', 'internal'],
    ['3fff::1', 'internal'],
    ['not an address', 'forbidden'],
    ['localhost', 'forbidden'],
  ];
  for (const [address, expected] of cases) {
    it(`${address} is ${expected}`, () => expect(classifyAddress(address)).toBe(expected));
  }

  it('lets internal addresses through only with WEBHOOK_ALLOW_PRIVATE, and forbidden ones never', () => {
    expect(isAllowedAddress('127.0.0.1', false)).toBe(false);
    expect(isAllowedAddress('127.0.0.1', true)).toBe(true);
    expect(isAllowedAddress('0.0.0.0', true)).toBe(false);
    expect(isAllowedAddress('224.0.0.1', true)).toBe(false);
    expect(isAllowedAddress('93.184.216.34', false)).toBe(true);
  });
});

describe('hasUserinfo', () => {
  const cases: Array<[string, boolean]> = [
    ['https://:@host.example/', true], // empty user and password: URL reports both as ''
    ['https://@host.example/', true],
    ['https://user:pw@host.example/', true],
    ['https://user@host.example:8443/', true],
    ['https:\\\\user@host.example/', true], // backslashes count as slashes in http(s) URLs
    ['https://us\ter@host.example/', true], // tabs are dropped by the parser
    [' https://u@host.example/', true],
    ['https://host.example/a@b', false],
    ['https://host.example?to=a@b', false],
    ['https://host.example#@', false],
    ['https://host.example:443/p', false],
  ];
  for (const [url, expected] of cases) it(`${JSON.stringify(url)} → ${expected}`, () => expect(hasUserinfo(url)).toBe(expected));
});

describe('retryDelayMs', () => {
  it('follows the documented schedule, then stops', () => {
    const exact = { ...DOCUMENTED_TUNING, jitter: 0 };
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, exact));
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(retryDelayMs(8, exact)).toBeNull();
  });

  it('spreads each delay by the jitter', () => {
    expect(retryDelayMs(1, DOCUMENTED_TUNING, () => 0)).toBe(4_500);
    expect(retryDelayMs(1, DOCUMENTED_TUNING, () => 0.999999)).toBe(5_500);
  });
});

describe('signing', () => {
  it('produces the signature the standardwebhooks library produces', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ id: 'e', type: 'test', data: { test: true } });
    const at = new Date(1_763_717_405_000);
    const headers = signedHeaders(secret, 'msg_1', body, Math.floor(at.getTime() / 1000));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', at, body));
    expect(headers['x-signature']).toMatch(/^t=1763717405,v1=[0-9a-f]{64}$/);
    expect(Buffer.from(headers['x-signature']!.split('v1=')[1]!, 'hex').toString('base64')).toBe(headers['webhook-signature']!.slice(3));
  });
});
