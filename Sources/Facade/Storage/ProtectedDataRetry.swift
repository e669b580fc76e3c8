import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence

/// Redoes, when protected data becomes available, what a client's file storage refused before the
/// device's first unlock (<doc:Behaviour#P8>): the directory's owner lock, the customer file (whose
/// stored customer the engine may adopt), a baseline kept in memory, and the event queue's items
/// kept in memory and its unread file.
///
/// The work runs on the client's storage queue, never on the thread that signals, and no lock is
/// held while a store or the engine is called.
final class ProtectedDataRetry: Sendable {
    /// What the current configuration stores in files.
    struct Target: Sendable {
        let stores: FileStoreRegistry.Stores
        let lock: StorageDirectoryLock
        let storageID: String
        let pipeline: TrackingPipeline
        let engine: SegmentationEngine
    }

    private let target = Locked<Target?>(nil)
    private let storageQueue: DispatchQueue
    private let logger: any SegmentsLogger

    init(storageQueue: DispatchQueue, logger: any SegmentsLogger) {
        self.storageQueue = storageQueue
        self.logger = logger
    }

    /// Points the retries at a new configuration's files; `nil` for a configuration without files.
    func retarget(_ newTarget: Target?) {
        target.withLock { $0 = newTarget }
    }

    /// Queues the retries on the storage queue.
    func protectedDataBecameAvailable() {
        storageQueue.async { [weak self] in
            guard let self, let target = target.value else { return }
            redo(target)
        }
    }

    /// Takes the owner lock first: without it the folder may be another process's by now
    /// (<doc:Behaviour#P5>), or still refused, and no file is read or written.
    private func redo(_ target: Target) {
        do {
            try target.lock.retryAfterProtectedData()
        } catch let error as SegmentsError where !error.isProtectedDataUnavailable {
            logger.log(.error, "Segments: \(error.message); the stored files are left as they are")
            return
        } catch {
            return
        }
        if case .read(let stored) = target.stores.customer.retryAfterProtectedData() {
            target.engine.storedCustomerRead(stored, storageID: target.storageID)
        }
        target.stores.baseline.retryAfterProtectedData()
        // Items the queue file held, found now: queued behind those tracked meanwhile (the
        // pipeline ignores the ones it has).
        for item in target.stores.events.retryAfterProtectedData() ?? [] {
            target.pipeline.adopt(item)
        }
    }
}
