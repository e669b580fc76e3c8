import Foundation
import SegmentsDomain

// Deleting what a client stored, for a stop that deletes it (<doc:Behaviour#A3>). Called on the
// client's storage queue; each store deletes under its own lock, as it writes.

extension FileCustomerStore {
    /// Deletes `customer.json` (<doc:Behaviour#A3>): ``load()`` answers `nil` until the next save.
    /// - Returns: whether the file is gone (or never existed).
    package func erase() -> Bool {
        eraseFile()
    }
}

extension FileSegmentBaselineStore {
    /// Deletes `segment-baseline.json`, the baseline and the link memory (<doc:Behaviour#A3>):
    /// ``load()`` answers ``SegmentBaseline/empty`` until the next save.
    /// - Returns: whether the file is gone (or never existed).
    package func erase() -> Bool {
        eraseFile()
    }
}

extension FileEventQueueStore {
    /// Removes the items `ids` (<doc:Behaviour#A3>): the ones the stopped pipeline held. Items
    /// appended since by another configuration are not among them and stay; when none is left,
    /// the journal file is deleted.
    /// - Throws: ``SegmentsError`` `.storage` when the journal cannot be written.
    package func erase(ids: [TrackedEvent.ID]) throws {
        try eraseItems(ids)
    }
}
