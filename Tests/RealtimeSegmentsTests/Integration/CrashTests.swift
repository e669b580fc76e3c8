import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

#if os(macOS) || os(Linux)  // starts child processes (`Process`)

/// Behaviour E4 against real crashes: `segments track` (a separate process with file storage) is killed
/// with SIGKILL at random moments, 20 times on one storage directory, with uploads slowed or
/// failing so that items are queued when it dies; a last run only uploads. Every event the child
/// reported as accepted must reach the emulator at least once, storage must load every time, every
/// child must die by SIGKILL (`--hold` keeps it alive once its queue is empty), and most kills must
/// hit a non-empty queue (the next run loads items). The event queue is synced by group commit
/// (see Behaviour R2): what `trackEvent` wrote survives a SIGKILL without waiting for its fsync.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct CrashTests {
    static let killedRuns = 20
    static let eventsPerRun = 12
    /// Kills that must find items queued (the issue asks for at least 15 of 20).
    static let minimumKillsOnANonEmptyQueue = 15

    @Test func e4_everyAcceptedEventIsUploadedAcrossSIGKILLs() async throws {
        let fixture = try TrackFixture(projectToken: "crash")
        defer { fixture.tearDown() }
        let (executable, emulator, storage, arguments) = (fixture.executable, fixture.emulator, fixture.storage, fixture.arguments)
        // Seeded, and the seed is in every failure: CRASH_TEST_SEED=<seed> replays the same choices
        // of when to kill (the child's own timing still varies from run to run).
        let seed = ProcessInfo.processInfo.environment["CRASH_TEST_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        let replay = "(seed \(seed); replay with CRASH_TEST_SEED=\(seed))"
        var generator = SeededGenerator(seed: seed)
        var accepted: [String] = []
        var queuedAtStart: [Int] = []

        for run in 0..<Self.killedRuns {
            emulator.clearFaults()
            switch run % 4 {
            case 1: emulator.injectFault(.status(503), on: .event, count: 2)  // retried with backoff
            case 2: emulator.injectFault(.dropMidBody, on: .event, count: 2)  // recorded, then the answer is cut
            default: break
            }
            // Then every upload lags behind tracking, so most kills find items queued.
            emulator.injectFault(.delay(0.01), on: .event, count: 1_000)
            // At least one event: the child then has loaded the storage (it prints `loaded` first), so
            // the next run's `loaded` line tells what this kill left queued.
            let killAfter = 1 + Int(generator.next(below: UInt64(Self.eventsPerRun)))
            let child = try TrackChild(
                executable: executable, arguments: arguments + ["--count", "\(Self.eventsPerRun)", "--prefix", "r\(run)", "--hold"])
            let deadline = Date().addingTimeInterval(10)
            while child.acceptedCount < killAfter && child.isRunning && Date() < deadline {
                try await Task.sleep(nanoseconds: 2_000_000)
            }
            // A random extra moment, so the kill also lands inside an append, an upload, a removal
            // or a compaction; every fifth run lives longer, so the backlog drains as well.
            let longest: UInt64 = run % 5 == 4 ? 400_000_000 : 40_000_000
            try await Task.sleep(nanoseconds: generator.next(below: longest + 1))
            let status = try await child.killWithSIGKILL()
            let output = child.output()
            #expect(status == .killed, "run \(run) did not die by SIGKILL: \(status) \(replay)\n\(output.errors)")
            accepted += output.accepted
            if let loaded = output.loaded { queuedAtStart.append(loaded) }
            // The child got as far as tracking, so it loaded the storage left by the last kill.
            #expect(output.loaded != nil, "run \(run) tracked without loading storage \(replay):\n\(output.errors)")
        }

        emulator.clearFaults()
        let final = try TrackChild(executable: executable, arguments: arguments + ["--count", "0", "--flush", "--timeout", "20"])
        let finalStatus = try await final.wait()
        let finalOutput = final.output()
        #expect(finalStatus == .exited(0), "final run: \(finalStatus) \(replay)\n\(finalOutput.errors)")
        #expect(finalOutput.lines.last == "queue empty", "\(replay)")

        // What the run after each kill loaded is what the kill left queued.
        let leftByKills = Array(queuedAtStart.dropFirst()) + [finalOutput.loaded ?? 0]
        let killsOnAQueue = leftByKills.filter { $0 > 0 }.count
        #expect(queuedAtStart.count == Self.killedRuns, "every run loaded storage before its kill \(replay)")
        #expect(
            killsOnAQueue >= Self.minimumKillsOnANonEmptyQueue,
            "only \(killsOnAQueue) of \(Self.killedRuns) kills hit a non-empty queue: \(leftByKills) \(replay)")

        let uploaded = emulator.events.compactMap { event -> String? in
            guard case .string(let seq)? = event.properties["seq"] else { return nil }
            return seq
        }
        let uploadedSet = Set(uploaded)
        let lost = accepted.filter { !uploadedSet.contains($0) }
        #expect(lost.isEmpty, "accepted but never uploaded: \(lost) \(replay)")
        #expect(Set(accepted).count == accepted.count, "a seq was accepted twice \(replay)")
        // Recovery never found a damaged file: a kill can only tear the last journal line.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: storage.url.path)) ?? []
        #expect(!names.contains { $0.contains(".corrupt-") }, "damaged files were set aside: \(names) \(replay)")

        let figures = """
            crash test \(replay): \(Self.killedRuns) killed runs + 1 final, \(accepted.count) events accepted, \
            \(uploaded.count) uploads of \(uploadedSet.count) distinct events (\(uploaded.count - uploadedSet.count) duplicates, \
            \(uploadedSet.subtracting(accepted).count) uploaded without an acknowledgement), lost \(lost.count), \
            \(queuedAtStart.count) of \(Self.killedRuns) killed runs loaded storage before the kill, queued at those \
            restarts: \(queuedAtStart.map(String.init).joined(separator: " ")) → final run \(finalOutput.loaded ?? -1); \
            \(killsOnAQueue) of \(Self.killedRuns) kills hit a non-empty queue
            """
        print(figures)
    }
}

#endif
