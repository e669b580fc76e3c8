import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The virtual timeline the whole test suite relies on.
@Suite(Hang.timeLimit(minutes: 2)) struct TestSchedulerTests {
    final class Log: Sendable {
        private let entries = Locked<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.value }
    }

    @Test func workRunsOnlyWhenItsDeadlineIsReachedInDeadlineOrder() async {
        let scheduler = TestScheduler()
        let log = Log()
        scheduler.schedule(after: 3) { log.add("3") }
        scheduler.schedule(after: 1) { log.add("1a") }
        scheduler.schedule(after: 1) { log.add("1b") }
        await scheduler.advance(by: 0.999)
        #expect(log.all == [])
        await scheduler.advance(by: 2.001)
        #expect(log.all == ["1a", "1b", "3"])
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func theClockShowsEachDeadlineWhileItsWorkRuns() async {
        let scheduler = TestScheduler()
        let start = scheduler.now()
        let seen = Locked<[TimeInterval]>([])
        for delay in [2.0, 7.0] {
            scheduler.schedule(after: delay) { seen.withLock { $0.append(scheduler.now().timeIntervalSince(start)) } }
        }
        await scheduler.advance(by: 10)
        #expect(seen.value == [2, 7])
        #expect(scheduler.now().timeIntervalSince(start) == 10)
    }

    @Test func cancelledWorkNeverRuns() async {
        let scheduler = TestScheduler()
        let log = Log()
        let token = scheduler.schedule(after: 1) { log.add("cancelled") }
        token.cancel()
        token.cancel()
        await scheduler.advance(by: 5)
        #expect(log.all == [])
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func workScheduledByWorkRunsInTheSameAdvanceWhenDue() async {
        let scheduler = TestScheduler()
        let log = Log()
        scheduler.schedule(after: 1) {
            log.add("outer")
            scheduler.schedule(after: 1) { log.add("inner") }
            scheduler.schedule(after: 10) { log.add("late") }
        }
        await scheduler.advance(by: 2)
        #expect(log.all == ["outer", "inner"])
        #expect(scheduler.pendingDelays == [9])
    }

    @Test func sleepingWorkParksSoLaterWorkRunsAndItResumesOnTime() async {
        let scheduler = TestScheduler()
        let log = Log()
        scheduler.schedule(after: 0) {
            log.add("start")
            await scheduler.sleep(for: 5)
            log.add("woke at \(Int(scheduler.now().timeIntervalSince1970) - 1_700_000_000)")
        }
        scheduler.schedule(after: 2) { log.add("two") }
        await scheduler.advance(by: 4)
        #expect(log.all == ["start", "two"])
        await scheduler.advance(by: 1)
        #expect(log.all == ["start", "two", "woke at 5"])
    }

    @Test func runUntilIdleFollowsAChainOfWorkToItsEnd() async {
        let scheduler = TestScheduler()
        let count = Locked(0)
        @Sendable func step() {
            let done = count.withLock { count in
                count += 1
                return count == 5
            }
            if !done { scheduler.schedule(after: 10) { step() } }
        }
        scheduler.schedule(after: 10) { step() }
        await scheduler.runUntilIdle()
        #expect(count.value == 5)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test func theRecordingRepositoryAnswersPerScriptAfterItsVirtualDelay() async throws {
        let scheduler = TestScheduler()
        let repository = RecordingSegmentRepository(scheduler: scheduler)
        let segment = Segment(id: "s", segmentationId: "g")
        repository.answer([.content(): [segment]], forCookie: "a")
        repository.failNextFetches(with: SegmentsError(.timeout, "slow"))
        repository.delay = 3
        let results = Locked<[Result<SegmentsByCategory, SegmentsError>]>([])
        for _ in 0..<2 {
            scheduler.schedule(after: 0) {
                do {
                    let answer = try await repository.fetchSegments(for: CustomerIds(cookie: "a"))
                    results.withLock { $0.append(.success(answer)) }
                } catch {
                    results.withLock { $0.append(.failure(SegmentsError.wrapping(error))) }
                }
            }
        }
        await scheduler.advance(by: 2.9)
        #expect(results.value.isEmpty)
        await scheduler.advance(by: 0.1)
        #expect(results.value.count == 2)
        #expect(results.value.first.flatMap { try? $0.get() } == nil)
        #expect(try results.value.last?.get() == [.content(): [segment]])
        #expect(repository.fetches == [CustomerIds(cookie: "a"), CustomerIds(cookie: "a")])
    }

    @Test func theCapturingLoggerKeepsOnlyEnabledLevels() {
        let logger = RecordingLogger(level: .warning)
        logger.log(.verbose, "hidden")
        logger.log(.warning, "shown")
        logger.log(.error, "shown too")
        #expect(logger.messages == ["shown", "shown too"])
        #expect(logger.isEnabled(.error) && !logger.isEnabled(.verbose))
    }
}
