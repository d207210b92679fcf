/**
 * Listings and photos written through ingest, as a feed would send them, for the tests that follow one listing
 * through changes (replication timestamps, the change log): records copied from seeded ones, with new keys.
 */
import { expect } from 'chai';
import { emptyReport, ingestBatch } from '../../src/ingest/ingest';
import type { ListingService } from '../../src/service';
import type { Rec } from './replication-paging';
import { storedRecords } from './replication-writer';

export interface ListingFixtures {
  /** Ingests the records into `set` and expects no error. */
  ingest(set: string, ...inputs: Rec[]): Promise<void>;
  /** A listing like a seeded Active one, with this key and status. */
  listing(key: string, status: string): Rec;
  /** A photo of the listing, like a seeded one, with this key. */
  photo(listingKey: string, key: string): Rec;
}

/** Fixtures over a seeded service; `idPrefix` keeps their ListingId and ResourceRecordID apart from the seed's. */
export async function listingFixtures(service: ListingService, idPrefix: string): Promise<ListingFixtures> {
  const listingTemplate = (await storedRecords(service, 'Property')).find((r) => r.MlsStatus === 'Active')!;
  const mediaTemplate = (await storedRecords(service, 'Media')).find((r) => r.MediaCategory === 'Photo')!;
  return {
    async ingest(set, ...inputs) {
      const report = emptyReport();
      await ingestBatch(service, set, inputs.map((input, i) => ({ line: i + 1, input })), report);
      expect(report.errors).to.deep.equal([]);
    },
    listing: (key, status) => ({ ...listingTemplate, ListingKey: key, ListingId: `${idPrefix}${key}`, MlsStatus: status }),
    photo: (listingKey, key) => ({
      ...mediaTemplate, MediaKey: key, ResourceRecordKey: listingKey, ResourceName: 'Property', ResourceRecordID: `${idPrefix}${listingKey}`,
      MediaCategory: 'Photo', MediaObjectID: key, OriginatingSystemMediaKey: key, SourceSystemMediaKey: key,
    }),
  };
}
