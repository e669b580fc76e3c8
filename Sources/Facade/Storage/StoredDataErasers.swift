import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence

/// Deletes what one configuration stored, for a stop that deletes it (<doc:Behaviour#A3>): file
/// stores delete their files; the app's own stores are emptied through their protocols (a
/// customer without ids, which the next configure replaces with a new one; an empty baseline; the
/// items removed one by one). Runs on the client's storage queue; failures are logged.
struct StoresErasure: StoredDataEraser {
    let customer: any CustomerStore
    let baseline: any SegmentBaselineStore
    let events: any EventQueueStore
    let logger: any SegmentsLogger

    func erase(queuedItems: [TrackedEvent.ID]) {
        attempt("the customer") {
            if let file = customer as? FileCustomerStore {
                guard file.erase() else { throw SegmentsError(.storage, "customer.json could not be deleted") }
            } else {
                try customer.save(CustomerIds([:]))
            }
        }
        attempt("the segments baseline") {
            if let file = baseline as? FileSegmentBaselineStore {
                guard file.erase() else { throw SegmentsError(.storage, "segment-baseline.json could not be deleted") }
            } else {
                try baseline.save(.empty)
            }
        }
        attempt("the event queue") {
            if let file = events as? FileEventQueueStore {
                try file.erase(ids: queuedItems)
            } else {
                for id in queuedItems { try events.remove(id: id) }
            }
        }
    }

    private func attempt(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch {
            logger.log(.error, "Segments: Deleting \(what) failed: \(SegmentsError.summary(of: error))")
        }
    }
}

/// What a stop before any configure deletes (<doc:Behaviour#A3>, "forget this customer"): the
/// storage the client's options name, without uploading anything. With `.directory(nil)`, every
/// integration folder of the default parent directory; with a folder, that one. A folder that
/// another client or process owns (it holds `owner.lock`) is left as it is, with a warning
/// (<doc:Behaviour#P5>). The app's own stores are emptied; memory holds nothing yet.
struct UnconfiguredStorageErasure: StoredDataEraser {
    let options: SegmentsClient.Options

    /// The storage ids it covers (a prefix of them) and the eraser; `nil` for memory.
    static func of(_ options: SegmentsClient.Options) -> (storage: String, eraser: any StoredDataEraser)? {
        switch options.storage {
        case .directory(let directory):
            let root = directory ?? StorageLocation.defaultParentDirectory()
            return ("directory " + root.standardizedFileURL.path, UnconfiguredStorageErasure(options: options))
        case .inMemory:
            return nil
        case .custom(let custom):
            let erasure = StoresErasure(
                customer: custom.customer, baseline: custom.baseline, events: custom.events, logger: options.runtime.logger)
            return ("custom stores", CustomStoresErasure(erasure: erasure))
        }
    }

    func erase(queuedItems: [TrackedEvent.ID]) {
        guard case .directory(let directory) = options.storage else { return }
        let folders: [URL]
        if let directory {
            folders = [directory]
        } else {
            let parent = StorageLocation.defaultParentDirectory()
            let listed = (try? FileManager.default.contentsOfDirectory(
                at: parent, includingPropertiesForKeys: [.isDirectoryKey], options: [.skipsHiddenFiles])) ?? []
            folders = listed.filter { (try? $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true }
        }
        let logger = options.runtime.logger
        for folder in folders where FileManager.default.fileExists(atPath: folder.path) {
            let lock: StorageDirectoryLock
            do {
                lock = try StorageDirectoryLock.acquire(
                    folder, creating: false, refusals: StorageRefusals(protectedData: options.protectedData))
            } catch {
                logger.log(
                    .warning,
                    "Segments: A storage folder is in use by another client or process; its data was not deleted: \(SegmentsError.summary(of: error))")
                continue
            }
            let stores = FileStoreRegistry.stores(
                in: folder, logger: logger, capacity: options.eventQueueCapacity, protectedData: options.protectedData)
            StoresErasure(customer: stores.customer, baseline: stores.baseline, events: stores.events, logger: logger)
                .erase(queuedItems: stores.events.load().map(\.id))
            withExtendedLifetime(lock) {}
        }
    }
}

/// The app's own stores, emptied by a stop before any configure: every stored item is removed.
private struct CustomStoresErasure: StoredDataEraser {
    let erasure: StoresErasure

    func erase(queuedItems: [TrackedEvent.ID]) {
        erasure.erase(queuedItems: erasure.events.load().map(\.id))
    }
}
