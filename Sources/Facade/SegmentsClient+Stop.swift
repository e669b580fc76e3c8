import Foundation
import SegmentsDomain
import SegmentsData

// Stopping, with or without the stored data, and anonymizing with a completion
// (<doc:Behaviour#A3>, <doc:Behaviour#A5>). Every completion is called once, on the main queue.

extension SegmentsClient {
    /// ``stop()``, and `completion` on the main queue once the disk work the client queued until
    /// the stop is done (<doc:Behaviour#A3>): the folder's files then say everything the client did,
    /// so an app that deletes the folder itself may do it in `completion`. When a deletion of
    /// ``stopAndDeleteData(completion:)`` is still to come, `completion` waits for it too.
    public func stop(completion: @escaping @Sendable () -> Void) {
        engine.stop(completion: completion)
    }

    /// Stops the integration and deletes what it stored, as the Exponea SDK 4.x's `stopIntegration`
    /// does (<doc:Behaviour#A3> rev 4). It takes effect at once: ``isConfigured`` is `false`, segment
    /// work stops as on ``anonymize()``, listeners are removed (a ``SegmentsModel``'s excepted: its
    /// lists read `[]`, <doc:Behaviour#M5>), ``changes(of:includeFirstLoad:)`` streams finish,
    /// waiting reads fail with `.stopped`, and further work is rejected until the next
    /// ``configure(_:)``. Behind that, on the client's queues, never the caller's thread:
    ///
    /// 1. What is queued is uploaded in one last flush, which ends when the queue is empty or an
    ///    upload fails (it does not wait out a backoff);
    /// 2. the customer, the segment baseline, the link memory and the event queue — items that
    ///    could not be uploaded included — are deleted;
    /// 3. `completion` is called on the main queue.
    ///
    /// The next `configure` starts a new customer (a new cookie, no hard ids) and never reads what
    /// is still to be deleted: made before `completion`, on the same storage, it has the deletion
    /// carried out first and cuts the upload short; made in `completion`, it finds the storage
    /// empty. The storage folder is free for another client of the process when this returns; that
    /// client too starts a new customer and reads the folder only once the deletion is done
    /// (<doc:Behaviour#P5>).
    ///
    /// Called before any `configure`, it deletes what the storage of ``Options/storage`` holds,
    /// without uploading it (the "forget this customer" case): with `.directory(nil)`, every
    /// integration folder of the default directory that no other client or process uses. Called
    /// when stopped, `completion` waits for a deletion still to come.
    public func stopAndDeleteData(completion: (@Sendable () -> Void)?) {
        engine.stopErasing(completion: completion, defaultStorage: UnconfiguredStorageErasure.of(options))
    }

    /// The `async` form of ``stopAndDeleteData(completion:)``: returns once the upload and the
    /// deletion are done.
    public func stopAndDeleteData() async {
        await withCheckedContinuation { continuation in
            stopAndDeleteData { continuation.resume() }
        }
    }

    /// ``anonymize()``, and `completion` on the main queue once the new customer is in place and
    /// saved (<doc:Behaviour#A5>). Before configure nothing changes, and `completion` follows the
    /// disk work queued so far.
    public func anonymize(completion: @escaping @Sendable () -> Void) {
        engine.anonymize(completion: completion)
    }
}
