import Foundation
import SegmentsPersistence

/// Hands out one set of file stores per storage directory in the process.
///
/// The file stores do not coordinate between instances, so two instances on one directory (a
/// client configured again while an old upload finishes, or two clients of one integration)
/// could interleave writes. Sharing the instances makes every writer go through one lock.
/// Entries are weak: the stores close with their last client.
enum FileStoreRegistry {
    struct Stores {
        let customer: FileCustomerStore
        let baseline: FileSegmentBaselineStore
        let events: FileEventQueueStore
        /// The one serial queue the directory's files are read and written on, in order.
        let queue: DispatchQueue
    }

    private final class WeakStores: @unchecked Sendable {
        // Audited: only read and written under `registry`'s lock.
        weak var customer: FileCustomerStore?
        weak var baseline: FileSegmentBaselineStore?
        weak var events: FileEventQueueStore?
        var queue: DispatchQueue?
    }

    private static let registry = Locked<[String: WeakStores]>([:])

    /// The stores of `directory`, shared with any other live user of the same directory.
    static func stores(in directory: URL, logger: any SegmentsLogger) -> Stores {
        let key = directory.standardizedFileURL.resolvingSymlinksInPath().path
        return registry.withLock { registry in
            registry = registry.filter { $0.value.events != nil }
            let entry = registry[key] ?? WeakStores()
            registry[key] = entry
            let queue = entry.queue ?? DispatchQueue(label: "RealtimeSegments.storage")
            entry.queue = queue
            if let customer = entry.customer, let baseline = entry.baseline, let events = entry.events {
                return Stores(customer: customer, baseline: baseline, events: events, queue: queue)
            }
            let stores = Stores(
                customer: FileCustomerStore(directory: directory, logger: logger),
                baseline: FileSegmentBaselineStore(directory: directory, logger: logger),
                events: FileEventQueueStore(directory: directory, logger: logger), queue: queue)
            entry.customer = stores.customer
            entry.baseline = stores.baseline
            entry.events = stores.events
            return stores
        }
    }
}
