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
    private let state = EmulatorLocked((sent: 0, finishing: false))
    /// Left when the thread ends.
    private let running = DispatchGroup()

    /// Starts dripping on `fd`: one byte, then `interval` microseconds of sleep, `limit` times.
    init(_ fd: Int32, every interval: useconds_t, limit: Int) {
        running.enter()
        Thread.detachNewThread { [self] in
            defer { running.leave() }
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

    /// Waits until the thread ends by itself (a send failed, or `limit` bytes were sent); false
    /// when it did not within `seconds`.
    func ended(within seconds: TimeInterval) -> Bool {
        running.wait(timeout: .now() + seconds) == .success
    }

    /// Stops the drip and waits until its thread has ended (at most one interval); false when it
    /// did not end within `seconds`.
    @discardableResult
    func finish(within seconds: TimeInterval = 60) -> Bool {
        state.withLock { $0.finishing = true }
        return ended(within: seconds)
    }
}
