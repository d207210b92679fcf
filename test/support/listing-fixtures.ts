/**
 * Listings and photos written through ingest, as a feed would send them, for the tests that follow one listing
 * through changes (replication timestamps, the change log): records copied from seeded ones, with new keys,
 * typed as the generated record types (a field the dictionary drops fails to compile).
 */
import { expect } from 'chai';
import type { EntitySetName, Lookups, Media, Property } from '../../generated/entities';
import { emptyReport, ingestBatch } from '../../src/ingest/ingest';
import type { ListingService } from '../../src/process/service';
import { storedRecords } from './replication-writer';
import type { IngestLine } from './typed-records';

export interface ListingFixtures {
  /** Ingests the records into `set` and expects no error. */
  ingest<S extends EntitySetName>(set: S, ...inputs: IngestLine<S>[]): Promise<void>;
  /** A listing like a seeded Active one, with this key and status. */
  listing(key: string, status: Lookups.MlsStatus): Property;
  /** A photo of the listing, like a seeded one, with this key. */
  photo(listingKey: string, key: string): Media;
}

/** Fixtures over a seeded service; `idPrefix` keeps their ListingId and ResourceRecordID apart from the seed's. */
export async function listingFixtures(service: ListingService, idPrefix: string): Promise<ListingFixtures> {
  const listingTemplate = (await storedRecords(service, 'Property')).find((r) => r.MlsStatus === 'Active')!;
  const mediaTemplate = (await storedRecords(service, 'Media')).find((r) => r.MediaCategory === 'Photo')!;
  return {
    async ingest(set, ...inputs) {
      const report = emptyReport();
      await ingestBatch(service, set, inputs.map((input, i) => ({ line: i + 1, input: input as Readonly<Record<string, unknown>> })), report);
      expect(report.errors).to.deep.equal([]);
    },
    listing: (key, status) => ({ ...listingTemplate, ListingKey: key, ListingId: `${idPrefix}${key}`, MlsStatus: status }),
    photo: (listingKey, key) => ({
      ...mediaTemplate, MediaKey: key, ResourceRecordKey: listingKey, ResourceName: 'Property', ResourceRecordID: `${idPrefix}${listingKey}`,
      MediaCategory: 'Photo', MediaObjectID: key, OriginatingSystemMediaKey: key, SourceSystemMediaKey: key,
    }),
  };
}
