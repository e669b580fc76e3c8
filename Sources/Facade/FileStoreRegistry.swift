import Foundation
import SegmentsDomain
import SegmentsPersistence

/// Hands out one set of file stores, and one directory lock, per storage directory in the process
/// (SPEC P5).
///
/// The file stores do not coordinate between instances, so two instances on one directory could
/// interleave writes; a client configured again on its directory, and an old upload still
/// finishing, therefore share the same instances. Across processes the `flock` of
/// ``StorageDirectoryLock`` excludes a second owner. Within the process, a directory belongs to the
/// one client that configured it until that client stops (or goes away): another client is refused
/// with a clear `.storage` error, because two pipelines on one queue would each upload the items
/// they loaded. Entries are weak: the stores close with their last user, the lock with its owner.
enum FileStoreRegistry {
    struct Stores {
        let customer: FileCustomerStore
        let baseline: FileSegmentBaselineStore
        let events: FileEventQueueStore
    }

    /// What a configured client holds while it owns a directory.
    struct Claim {
        let stores: Stores
        let lock: StorageDirectoryLock
        /// The storage queue of the client of this process that used the directory before, when
        /// it was another one: its saves may still be queued there, so the new owner waits for them
        /// (`sync`) before it reads the files.
        let previousQueue: DispatchQueue?
    }

    private final class Entry: @unchecked Sendable {
        // Audited: only read and written under `registry`'s lock.
        weak var customer: FileCustomerStore?
        weak var baseline: FileSegmentBaselineStore?
        weak var events: FileEventQueueStore?
        weak var lock: StorageDirectoryLock?
        var owner: ObjectIdentifier?
        /// The storage queue of the directory's last owner in this process.
        var lastQueue: DispatchQueue?
    }

    private static let registry = Locked<[String: Entry]>([:])

    private static func key(_ directory: URL) -> String {
        directory.standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The stores of `directory`, shared with any other live user of the same directory.
    static func stores(in directory: URL, logger: any SegmentsLogger) -> Stores {
        registry.withLock { registry in stores(in: directory, logger: logger, &registry) }
    }

    /// Makes `owner` (whose disk work runs on `queue`) the owner of `directory` (SPEC P5) and
    /// returns its stores and lock.
    /// - Throws: ``SegmentsError`` `.storage` when another client of this process owns it, or
    ///   another process holds its lock.
    static func claim(
        _ directory: URL, for owner: AnyObject, queue: DispatchQueue, logger: any SegmentsLogger
    ) throws -> Claim {
        try registry.withLock { registry in
            let stores = stores(in: directory, logger: logger, &registry)
            let entry = registry[key(directory)]!
            let lock: StorageDirectoryLock
            if let held = entry.lock {
                guard entry.owner == nil || entry.owner == ObjectIdentifier(owner) else {
                    throw SegmentsError(
                        .storage,
                        "The storage directory is in use by another SegmentsClient in this process; one client at a time may use a storage directory (stop the other one first)")
                }
                lock = held
            } else {
                lock = try StorageDirectoryLock.acquire(directory)
                entry.lock = lock
            }
            entry.owner = ObjectIdentifier(owner)
            let previous = entry.lastQueue.flatMap { $0 === queue ? nil : $0 }
            entry.lastQueue = queue
            return Claim(stores: stores, lock: lock, previousQueue: previous)
        }
    }

    /// Ends the ownership of the directory `lock` belongs to (the client stopped): another client
    /// of this process may claim it at once, while the lock itself stays held until its last save.
    static func release(_ lock: StorageDirectoryLock) {
        registry.withLock { registry in
            for entry in registry.values where entry.lock === lock { entry.owner = nil }
        }
    }

    private static func stores(in directory: URL, logger: any SegmentsLogger, _ registry: inout [String: Entry]) -> Stores {
        let key = key(directory)
        registry = registry.filter { $0.value.events != nil || $0.value.lock != nil || $0.value.lastQueue != nil }
        let entry = registry[key] ?? Entry()
        registry[key] = entry
        if let customer = entry.customer, let baseline = entry.baseline, let events = entry.events {
            return Stores(customer: customer, baseline: baseline, events: events)
        }
        let stores = Stores(
            customer: FileCustomerStore(directory: directory, logger: logger),
            baseline: FileSegmentBaselineStore(directory: directory, logger: logger),
            events: FileEventQueueStore(directory: directory, logger: logger))
        entry.customer = stores.customer
        entry.baseline = stores.baseline
        entry.events = stores.events
        return stores
    }
}
