import Foundation
import SegmentsDomain

extension TrackingPipeline {
    /// Uploads queued items oldest first, one request each, until none is left (see Behaviour E3).
    ///
    /// A transient or authorization failure ends the flush, keeps every item and, unless flushing
    /// is manual, retries the whole queue after a backoff; a permanent one counts against the
    /// item, which is dropped after the limit, and the flush goes on. Each step is O(1), so
    /// draining n items is O(n).
    func runUploadLoop() async {
        while let event = transition({ $0.nextUpload() }) {
            do {
                try await uploader.upload(event)
                onStorageQueue("Removing an uploaded event from the queue") { try $0.remove(id: event.id) }
                transition { $0.uploadSucceeded(event.id) }
                onUploaded()
            } catch {
                let failure = SegmentsError.wrapping(error)
                if failure.isTransient || failure.isAuthorizationFailure {
                    let random = dependencies.runtime.random()
                    transition { $0.uploadPaused(by: failure, random: random) }
                    return
                }
                let (failed, dropped) = transition { machine -> ((TrackedEvent, Bool), [TrackingStateMachine.Action]) in
                    let (failed, dropped, actions) = machine.uploadFailedPermanently(event, failure)
                    return ((failed, dropped), actions)
                }
                onStorageQueue("Updating the event queue") { store in
                    if dropped { try store.remove(id: failed.id) } else { try store.update(failed) }
                }
            }
        }
    }

    /// Runs a store change on the storage queue, in order with every other disk access, and waits
    /// for it (the loop runs on the scheduler, never on an app's thread). At-least-once: a failed
    /// removal means a duplicate upload after a restart, never a loss (E4).
    private func onStorageQueue(_ what: String, _ change: @Sendable (any EventQueueStore) throws -> Void) {
        let store = self.store
        let logger = dependencies.runtime.logger
        dependencies.storageQueue.sync {
            do { try change(store) } catch {
                logger.log(.error, "Tracking: \(what) failed: \(error)")
            }
        }
    }
}

extension SegmentsError {
    /// Whether the backend refused the credentials (401, 403): the whole queue waits (see Behaviour E3).
    var isAuthorizationFailure: Bool {
        code == .unauthorized || httpStatus == 401 || httpStatus == 403
    }
}
