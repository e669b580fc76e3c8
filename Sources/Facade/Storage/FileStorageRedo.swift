import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence

/// What a configuration's file storage redoes when protected data becomes available
/// (<doc:Behaviour#P8>): the directory's owner lock, the customer file (whose stored customer the
/// engine may adopt), a baseline kept in memory, and the event queue's items kept in memory and
/// its unread file.
///
/// It is a port of the configuration, held in the engine's state with the rest of it: the engine
/// decides, in the client's one order, which configuration redoes, and runs it on the client's
/// storage queue, never on the thread that signals and never under a lock.
struct FileStorageRedo: RefusedStorageRedo {
    let stores: FileStoreRegistry.Stores
    let lock: StorageDirectoryLock
    let logger: any SegmentsLogger

    /// Takes the owner lock first: without it the folder may be another process's by now
    /// (<doc:Behaviour#P5>), or still refused, and no file is read or written.
    func redo() -> RefusedStorageRedone {
        do {
            try lock.retryAfterProtectedData()
        } catch let error as SegmentsError where !error.isProtectedDataUnavailable {
            logger.log(.error, "Segments: \(error.message); the stored files are left as they are")
            return RefusedStorageRedone(customer: .notRead, items: [])
        } catch {
            return RefusedStorageRedone(customer: .notRead, items: [])
        }
        var customer = RefusedStorageRedone.CustomerRead.notRead
        if case .read(let stored) = stores.customer.retryAfterProtectedData() { customer = .read(stored) }
        stores.baseline.retryAfterProtectedData()
        return RefusedStorageRedone(customer: customer, items: stores.events.retryAfterProtectedData() ?? [])
    }
}
