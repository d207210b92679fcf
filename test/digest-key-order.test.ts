/**
 * Issue 41, the digest protocol's key order as the puller compares keys (src/pull/digest-search.ts): strings by
 * their UTF-8 bytes, numbers as numbers. The puller compares without encoding; the bytes are the reference.
 */
import { expect } from 'chai';
import { compareKeys } from '../src/pull/digest-search';

const sign = (n: number) => Math.sign(n);
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Characters from every UTF-8 length, and both sides of the surrogates (U+D7FF, U+E000, U+FFFF, past U+FFFF). */
const ALPHABET = ['a', 'Z', '0', '~', '\u007f', '\u0080', 'é', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '😀', '\u{10000}', '\u{10ffff}'];

function randomKey(random: () => number): string {
  const length = Math.floor(random() * 5);
  let key = '';
  for (let i = 0; i < length; i++) key += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return key;
}

/** A seeded generator (mulberry32): the same keys every run. */
function seeded(seed: number): () => number {
  let t = seed;
  return () => {
    t = (t + 0x6d2b79f5) | 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

describe('issue 41: the digest key order (UTF-8 bytes) as the puller compares keys', () => {
  it('orders string keys exactly as their UTF-8 bytes, characters past U+FFFF after U+E000–U+FFFF', () => {
    expect(sign(compareKeys('\u{10000}', '\uffff'))).to.equal(1);
    expect(sign(compareKeys('\ud7ff', '\ue000'))).to.equal(-1);
    const random = seeded(41);
    for (let i = 0; i < 20_000; i++) {
      const a = randomKey(random);
      const b = randomKey(random);
      expect(sign(compareKeys(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).to.equal(byBytes(a, b));
    }
  });

  it('orders numeric keys as numbers', () => {
    expect(sign(compareKeys(9, 10))).to.equal(-1);
    expect(sign(compareKeys(10, 10))).to.equal(0);
  });
});
