import Foundation

/// The main queue, the main actor's executor: the one way the SDK runs work there.
///
/// Whether code runs on it is told by a mark on the queue, not by `Thread.isMainThread`: where the
/// main thread has handed the main queue to `dispatchMain()` (Linux, `swift test`), the queue's work
/// runs on other threads, and `MainActor.assumeIsolated` still holds there.
package enum MainQueue {
    /// A mark only the main queue (and the queues targeting it) carries.
    private static let mark: DispatchSpecificKey<Bool> = {
        let mark = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: mark, value: true)
        return mark
    }()

    /// True while running on the main queue.
    package static var isCurrent: Bool { DispatchQueue.getSpecific(key: mark) == true }

    /// Runs `body` on the main actor: at once when called on the main queue (so an expiration
    /// handler, which UIKit calls there, ends its task before it returns; a list delivered on a
    /// `.main` delivery queue is set before the next listener runs), else queued on the main queue,
    /// whose order keeps the calls of one serial queue in the order they were made.
    package static func run(_ body: @escaping @MainActor @Sendable () -> Void) {
        if isCurrent {
            onMainQueue(body)
        } else {
            DispatchQueue.main.async { onMainQueue(body) }
        }
    }

    /// Runs `body`, which is on the main queue (its mark says so): the main actor's executor.
    ///
    /// Not `MainActor.assumeIsolated`, whose check is the runtime's: on systems before iOS 17 and
    /// macOS 14 that check is documented by others to fail on the main queue outside a task, and
    /// it cannot be tried here (issue 34 item 9). The queue's mark is this type's own proof, so the
    /// call does not depend on which runtime the app runs on.
    private static func onMainQueue(_ body: @escaping @MainActor @Sendable () -> Void) {
        precondition(isCurrent, "MainQueue.onMainQueue off the main queue")
        let run = unsafeBitCast(body, to: (@Sendable () -> Void).self)
        run()
    }
}
