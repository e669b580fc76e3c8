import Foundation

@testable import SegmentsEmulator

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client that sends one byte at a time on a socket from a thread of its own, until it has sent
/// `limit` bytes, a send fails, or ``finish()`` is called.
///
/// ``finish()`` returns only once the thread has ended, so the socket can be closed after it: a
/// thread still sending to a closed descriptor would send into whatever socket or file of another
/// test reuses its number (a drip that outlived its test once sent its bytes into the next test's
/// connection, which the server answered 405).
final class Drip: @unchecked Sendable {
    private let state = EmulatorLocked((sent: 0, finishing: false, ended: false))
    private let ended = DispatchSemaphore(value: 0)

    /// Starts dripping on `fd`: one byte, then `interval` microseconds of sleep, `limit` times.
    init(_ fd: Int32, every interval: useconds_t, limit: Int) {
        Thread.detachNewThread { [self] in
            defer {
                state.withLock { $0.ended = true }
                ended.signal()
            }
            #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
            #else
            let flags: Int32 = 0
            #endif
            for _ in 0..<limit {
                // The check and the send are one step under the lock, so no send starts after
                // `finish()` has set `finishing`.
                let sentOne = state.withLock { state -> Bool in
                    guard !state.finishing else { return false }
                    var byte = UInt8(ascii: "a")
                    guard send(fd, &byte, 1, flags) == 1 else { return false }
                    state.sent += 1
                    return true
                }
                guard sentOne else { return }
                usleep(interval)
            }
        }
    }

    /// The bytes sent so far.
    var sent: Int { state.value.sent }

    /// Whether the thread has ended (a send failed, or `limit` bytes were sent).
    var hasEnded: Bool { state.value.ended }

    /// Stops the drip and waits until its thread has ended (at most one interval); false when it
    /// did not end within `seconds`.
    @discardableResult
    func finish(within seconds: TimeInterval = 60) -> Bool {
        state.withLock { $0.finishing = true }
        return ended.wait(timeout: .now() + seconds) == .success
    }
}
