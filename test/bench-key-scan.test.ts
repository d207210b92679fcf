/**
 * The benchmark's walk client reads each page's keys from its bytes as they arrive (bench/key-scan.ts): whatever
 * the chunks a page arrives in, it must read exactly the keys JSON.parse finds, in order, or the walk's check
 * that every server returned the same keys would not hold.
 */
import { expect } from 'chai';
import { KeyScanner } from '../bench/key-scan';

/** The keys scanned from `body` cut into chunks of `size` bytes. */
function scanned(body: Buffer, size: number): { keys: string[]; pending: boolean } {
  const scanner = new KeyScanner('ListingKey');
  for (let i = 0; i < body.length; i += size) scanner.push(body.subarray(i, i + size));
  return { keys: scanner.keys, pending: scanner.pending };
}

const records = [
  { ListingKey: 'L1', PublicRemarks: 'plain' },
  // The member's text inside a string value is escaped, so it is not a member.
  { PublicRemarks: 'says "ListingKey":"X" in its remarks', ListingKey: 'L2' },
  { ListingKey: 'L"3\\', City: 'Québec' },
  { StreetName: 'Ünter den Linden ✓', ListingKey: 'Lé4✓' },
  { ListingKey: '' },
];
const page = Buffer.from(JSON.stringify({
  '@odata.context': '$metadata#Property("ListingKey":"not a key")',
  value: records,
  '@odata.nextLink': 'Property?$skiptoken="ListingKey":"Z"',
}), 'utf8');
const parsedKeys = (JSON.parse(page.toString('utf8')) as { value: { ListingKey: string }[] }).value.map((r) => r.ListingKey);

describe('bench walk: keys read from a page\'s bytes as they arrive', () => {
  it('reads exactly the keys JSON.parse finds, whole or cut into chunks of any size', () => {
    expect(parsedKeys).to.deep.equal(['L1', 'L2', 'L"3\\', 'Lé4✓', '']);
    for (let size = 1; size <= page.length; size++) {
      const { keys, pending } = scanned(page, size);
      expect(keys, `chunks of ${size} bytes`).to.deep.equal(parsedKeys);
      expect(pending).to.equal(false);
    }
  });

  it('says when a page ends inside a key', () => {
    const cut = page.subarray(0, page.indexOf('L2') + 1);
    const { keys, pending } = scanned(cut, 7);
    expect(keys).to.deep.equal(['L1']);
    expect(pending).to.equal(true);
  });

  it('does not take a member cut by a chunk\'s end for a pending key', () => {
    const cut = page.subarray(0, page.indexOf('"ListingKey":"L2"') + 5);
    expect(scanned(cut, 3).pending).to.equal(false);
  });
});
