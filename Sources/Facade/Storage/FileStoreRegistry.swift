import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence

/// Hands out one set of file stores, and one directory lock, per storage directory in the process
/// (<doc:Behaviour#P5>).
///
/// The file stores do not coordinate between instances, so two instances on one directory could
/// interleave writes; a client configured again on its directory, and an old upload still
/// finishing, therefore share the same instances. Across processes the `flock` of
/// ``StorageDirectoryLock`` excludes a second owner. Within the process, a directory belongs to the
/// one client that configured it until that client stops (or goes away): another client is refused
/// with a clear `.storage` error, because two pipelines on one queue would each upload the items
/// they loaded. Entries are weak: the stores close with their last user, the lock with its owner.
enum FileStoreRegistry {
    /// One directory's file stores, by their concrete types rather than as an
    /// ``SegmentsClient/Options/CustomStores`` of `any` stores: ``FileStorageRedo`` calls what
    /// only file stores have (<doc:Behaviour#P8>).
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
        let previousWrites: PreviousWrites?
        /// The customer that client ended with, handed over with the directory: its save may still
        /// be queued on its storage queue, so the file may not have it yet (<doc:Behaviour#R1>).
        let previousCustomer: CustomerIds?
        /// Names this claim: a release for an older claim of the directory changes nothing.
        let id: Int
        /// The directory's ownership before this claim, for ``FileStoreRegistry/withdraw(_:in:)``.
        fileprivate let before: Ownership
    }

    /// The part of an ``Entry`` a claim changes.
    struct Ownership {
        /// The path the current owner claimed the directory by: another client claiming it by
        /// another path is told that the two paths name one folder.
        var ownerPath: String?
        var owner: ObjectIdentifier?
        /// The current claim, or the last one.
        var claim = 0
        /// The storage queue of the directory's last owner in this process.
        var lastQueue: DispatchQueue?
        /// Done when the writes the last owner queued before releasing the directory are.
        var lastWrites: DispatchGroup?
        /// The customer the directory's last owner ended with.
        var lastCustomer: CustomerIds?
    }

    /// How the new owner's storage queue waits for the previous owner's writes to the directory,
    /// before its first read there — the new owner's caller never waits (<doc:Behaviour#R1>).
    enum PreviousWrites {
        /// The previous owner released the directory: its writes up to then are done when this
        /// group is. Waiting for it cannot wait for anything queued after the release, so two
        /// clients that swap directories do not wait for each other.
        case released(DispatchGroup)
        /// The previous owner went away without releasing it: nothing new is queued on its queue.
        case abandoned(DispatchQueue)

        /// Waits, on the new owner's storage queue, for the previous owner's writes.
        func wait() {
            switch self {
            case .released(let group): group.wait()
            case .abandoned(let queue): queue.sync {}
            }
        }
    }

    /// What the table keeps per directory.
    final class Entry: @unchecked Sendable {
        // Audited: only read and written under `table`'s lock.
        weak var customer: FileCustomerStore?
        weak var baseline: FileSegmentBaselineStore?
        weak var events: FileEventQueueStore?
        weak var lock: StorageDirectoryLock?
        /// Who owns the directory, and what its last owner left: what a claim changes, and
        /// ``FileStoreRegistry/withdraw(_:in:)`` puts back.
        var ownership = Ownership()

        /// Whether the next client to claim the directory must still be handed what its last owner
        /// left: that owner went away without releasing it (its queue), or released it and the
        /// writes it queued until then are not done. Once they are, the files say everything it
        /// did, as they would to the next launch, and the entry may go.
        var handOverPending: Bool {
            guard ownership.lastQueue != nil else { return false }
            guard let lastWrites = ownership.lastWrites else { return true }
            return lastWrites.wait(timeout: .now()) == .timedOut  // a look, never a wait
        }
    }

    private static let table = makeTable()

    /// A table of directories, each kept while it has stores, a lock, or a hand-over pending from
    /// its last owner: a process that uses many folders one after another keeps none of them. `identify`
    /// is the table's view of the file system (``DirectoryTable``); the process has one table.
    static func makeTable(
        identify: @escaping @Sendable (String) -> DirectoryIdentity? = { DirectoryIdentity.of($0) }
    ) -> DirectoryTable<Entry> {
        DirectoryTable<Entry>(
            keepingWhile: { entry in entry.events != nil || entry.lock != nil || entry.handOverPending }, identify: identify)
    }

    /// The stores of `directory`, shared with any other live user of the same directory. Their
    /// refused files are transient only while `protectedData` reports protected data unavailable
    /// (<doc:Behaviour#P8>).
    static func stores(
        in directory: URL, logger: any SegmentsLogger, capacity: Int = EventQueueLimits.defaultCapacity,
        protectedData: any ProtectedDataAvailability = SystemProtectedDataAvailability()
    ) -> Stores {
        table.withEntry(of: directory, make: Entry.init) {
            stores(of: $0, in: directory, logger: logger, capacity: capacity, protectedData: protectedData)
        }
    }

    /// Makes `owner` (whose disk work runs on `queue`) the owner of `directory` (<doc:Behaviour#P5>)
    /// and returns its stores and lock. The event queue store reads back up to `capacity` items,
    /// the owner's queue capacity (<doc:Behaviour#P7>): when the store is already open (a previous
    /// owner's upload still holds it), it keeps the capacity it was made with. A refused file —
    /// the lock file, then any store's — is transient only while `protectedData` reports protected
    /// data unavailable (<doc:Behaviour#P8>).
    /// - Throws: ``SegmentsError`` `.storage` when another client of this process owns it, or
    ///   another process holds its lock, or the lock file is refused while protected data is
    ///   available.
    ///   A client that claimed it by another path naming the same folder (a symbolic link, or a
    ///   spelling that differs only in letter case on a case-insensitive volume) is named as such.
    static func claim(
        _ directory: URL, for owner: AnyObject, queue: DispatchQueue, logger: any SegmentsLogger,
        capacity: Int = EventQueueLimits.defaultCapacity,
        protectedData: any ProtectedDataAvailability = SystemProtectedDataAvailability(), in table: DirectoryTable<Entry> = table
    ) throws -> Claim {
        let path = directory.standardizedFileURL.resolvingSymlinksInPath().path
        // A lock held for a moment is waited out here, outside the table's lock.
        return try StorageDirectoryLock.waitingOutMomentaryHolders {
            try claimOnce(
                directory, path: path, for: owner, queue: queue, logger: logger, capacity: capacity, protectedData: protectedData,
                in: table)
        }
    }

    /// One attempt of ``claim(_:for:queue:logger:capacity:protectedData:in:)``, under the table's lock.
    private static func claimOnce(
        _ directory: URL, path: String, for owner: AnyObject, queue: DispatchQueue, logger: any SegmentsLogger,
        capacity: Int, protectedData: any ProtectedDataAvailability, in table: DirectoryTable<Entry>
    ) throws -> Claim {
        try table.withEntry(of: directory, make: Entry.init) { entry in
            let stores = stores(of: entry, in: directory, logger: logger, capacity: capacity, protectedData: protectedData)
            let lock: StorageDirectoryLock
            if let held = entry.lock {
                guard entry.ownership.owner == nil || entry.ownership.owner == ObjectIdentifier(owner) else {
                    if let ownerPath = entry.ownership.ownerPath, ownerPath != path {
                        throw SegmentsError(
                            .storage,
                            "The storage directory is in use by another SegmentsClient in this process, which named the same folder by another path (a symbolic link, or a name that differs only in letter case on a case-insensitive volume); one client at a time may use a storage directory (stop the other one first)")
                    }
                    throw SegmentsError(
                        .storage,
                        "The storage directory is in use by another SegmentsClient in this process; one client at a time may use a storage directory (stop the other one first)")
                }
                lock = held
            } else {
                lock = try StorageDirectoryLock.acquire(directory, refusals: StorageRefusals(protectedData: protectedData))
                entry.lock = lock
            }
            let before = entry.ownership
            entry.ownership.owner = ObjectIdentifier(owner)
            entry.ownership.ownerPath = path
            entry.ownership.claim += 1
            var previous: PreviousWrites?
            if let queue = entry.ownership.lastQueue.flatMap({ $0 === queue ? nil : $0 }) {
                previous = entry.ownership.lastWrites.map(PreviousWrites.released) ?? .abandoned(queue)
            }
            let customer = previous == nil ? nil : entry.ownership.lastCustomer
            entry.ownership.lastQueue = queue
            entry.ownership.lastWrites = nil
            entry.ownership.lastCustomer = nil
            return Claim(
                stores: stores, lock: lock, previousWrites: previous, previousCustomer: customer, id: entry.ownership.claim, before: before)
        }
    }

    /// Undoes `claim`, the newest of its directory, which its configure could not use
    /// (<doc:Behaviour#P8>: the customer file was refused): the directory's entry is as it was
    /// before, so the client is left as it was. A lock the claim took goes with its last reference.
    static func withdraw(_ claim: Claim, in table: DirectoryTable<Entry> = table) {
        table.forEach { entry in
            if entry.lock === claim.lock, entry.ownership.claim == claim.id {
                entry.ownership = claim.before
            }
        }
    }

    /// Ends the ownership of the directory of `claim` (the client stopped, or moved to another
    /// directory): another client of this process may claim it at once, and gets `customer`, the
    /// one the owner ended with, and `writes`, done when the owner's writes queued so far are. A
    /// release for a claim that a newer one replaced changes nothing.
    static func release(
        _ claim: Claim, customer: CustomerIds?, writes: DispatchGroup, in table: DirectoryTable<Entry> = table
    ) {
        table.forEach { entry in
            if entry.lock === claim.lock, entry.ownership.claim == claim.id {
                entry.ownership.owner = nil
                entry.ownership.ownerPath = nil
                entry.ownership.lastCustomer = customer
                entry.ownership.lastWrites = writes
            }
        }
    }

    /// Gives a claimed directory back when its configuration ends (<doc:Behaviour#P5>,
    /// <doc:Behaviour#R1>): ``release(endingWith:)`` frees it for another client of the process
    /// before the ending call returns; that client's storage queue waits for `writes`, done once
    /// ``writesQueued()`` has put a mark behind the owner's writes on its storage queue. The `flock`
    /// is kept until that mark.
    final class HandOver: StorageHandOver {
        private let claim: Claim
        private let storageQueue: DispatchQueue
        private let writes = DispatchGroup()
        /// Whether `writes` was entered: by whichever of the two steps comes first (they may come
        /// in either order), so it is always entered before it is left, and only once.
        private let entered = Locked(false)

        init(_ claim: Claim, storageQueue: DispatchQueue) {
            self.claim = claim
            self.storageQueue = storageQueue
        }

        func release(endingWith customer: CustomerIds) {
            enterOnce()
            FileStoreRegistry.release(claim, customer: customer, writes: writes)
        }

        func writesQueued() {
            enterOnce()
            storageQueue.async { [claim, writes] in
                _ = claim.lock
                writes.leave()
            }
        }

        private func enterOnce() {
            entered.withLock { entered in
                if !entered { writes.enter() }  // no code of anyone else: a counter of libdispatch
                entered = true
            }
        }
    }

    private static func stores(
        of entry: Entry, in directory: URL, logger: any SegmentsLogger, capacity: Int, protectedData: any ProtectedDataAvailability
    ) -> Stores {
        if let customer = entry.customer, let baseline = entry.baseline, let events = entry.events {
            return Stores(customer: customer, baseline: baseline, events: events)
        }
        let stores = Stores(
            customer: FileCustomerStore(directory: directory, logger: logger, protectedData: protectedData),
            baseline: FileSegmentBaselineStore(directory: directory, logger: logger, protectedData: protectedData),
            events: FileEventQueueStore(directory: directory, logger: logger, capacity: capacity, protectedData: protectedData))
        entry.customer = stores.customer
        entry.baseline = stores.baseline
        entry.events = stores.events
        return stores
    }
}
