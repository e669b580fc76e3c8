import Foundation
import SegmentsDomain
import SegmentsTesting
import XCTest

/// SPEC X4 in XCTest style: the test kit fails the running XCTest test where Swift Testing would
/// fail its test. Each test captures the failures XCTest records (instead of failing), then checks
/// there is exactly the expected one, at the expected line.
final class XCTestReportingTests: XCTestCase {
    /// A failure XCTest recorded for this test.
    struct Recorded: Equatable {
        let message: String
        let file: String
        let line: Int
    }

    private let recorded = LockedValue<[Recorded]>([])
    /// Signalled for each failure recorded: a test waits for the first one without polling.
    private let failureRecorded = DispatchSemaphore(value: 0)

    #if canImport(ObjectiveC)
        @available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *)
        override func record(_ issue: XCTIssue) {
            let location = issue.sourceCodeContext.location
            recorded.withLock {
                $0.append(Recorded(message: issue.compactDescription, file: location?.fileURL.path ?? "", line: location?.lineNumber ?? 0))
            }
            failureRecorded.signal()
        }
    #else
        override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
            recorded.withLock { $0.append(Recorded(message: description, file: filePath, line: lineNumber)) }
            failureRecorded.signal()
        }
    #endif

    private var failures: [Recorded] { recorded.withLock { $0 } }

    /// Fails for real (through XCTest's own handler, not the capture above): the checks of a
    /// test that captures its failures must still be able to fail it.
    private func check(_ condition: Bool, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        guard !condition else { return }
        #if canImport(ObjectiveC)
            if #available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *) {
                super.record(XCTIssue(type: .assertionFailure, compactDescription: message))
                return
            }
        #else
            super.recordFailure(withDescription: message, inFile: "\(file)", atLine: Int(line), expected: true)
        #endif
    }

    // MARK: - Unimplemented doubles

    func test_x4_anUnimplementedDoubleCalledInAnXCTestTestFailsItAtTheLineThatMadeIt() {
        let clock = UnimplementedClock(); let madeAt = #line
        _ = clock.now()
        check(failures.count == 1, "expected one failure, got \(failures)")
        check(failures.first?.line == madeAt, "the failure is not at the line that made the double: \(failures)")
        check(failures.first?.file.hasSuffix("XCTestReportingTests.swift") == true, "the failure names another file: \(failures)")
        check(
            failures.first?.message.contains("Unimplemented: SegmentsClock.now() was called on the UnimplementedClock") == true,
            "the message does not say what was called: \(failures)")
    }

    func test_x4_aCallFromAnotherThreadFailsTheRunningXCTestTestToo() {
        // The SDK calls its ports on its own queues, where no test is current.
        let repository = UnimplementedSegmentRepository(); let madeAt = #line
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            Task {
                _ = try? await repository.fetchSegments(for: CustomerIds(cookie: "c"))
                done.signal()
            }
        }
        check(done.wait(timeout: .now() + 30) == .success, "the call did not return")
        check(failures.count == 1, "expected one failure, got \(failures)")
        check(failures.first?.line == madeAt, "the failure is not at the line that made the double: \(failures)")
    }

    // MARK: - A TestScheduler nobody advances

    func test_x4_aTestSchedulerWithWorkWaitingThatNobodyAdvancesSaysSoAndNamesTheFix() async {
        let scheduler = TestScheduler(reportingStallsAfter: 0.2); let madeAt = #line
        // An awaited read whose answer is work on the scheduler: it never returns unless advanced.
        let read = Task {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                scheduler.schedule(after: 5) { continuation.resume() }
            }
        }
        // The stall report comes from the scheduler's watcher: wait for it (bounded), not poll.
        let recorded = failureRecorded
        _ = await onDedicatedThread { recorded.wait(timeout: .now() + 30) == .success }
        // Now advanced, as the message says: the read returns.
        await scheduler.advance(by: 5)
        await read.value
        check(failures.count == 1, "expected one failure, got \(failures)")
        let failure = failures.first
        check(failure?.line == madeAt, "the failure is not at the line that made the scheduler: \(String(describing: failure))")
        check(failure?.message.contains("1 piece(s) of work waiting (due in 5 s)") == true, "the waiting work is not named: \(String(describing: failure))")
        check(failure?.message.contains("Fix: advance the scheduler") == true, "the fix is not named: \(String(describing: failure))")
    }
}
