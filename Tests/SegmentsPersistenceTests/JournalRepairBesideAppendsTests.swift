import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Behaviour R1, E4, P2: the repair of a damaged event queue — the re-read, the copy set aside,
/// the rewrite — runs without the store's lock, so an append made meanwhile (a `trackEvent` on the
/// app's thread) neither waits for it nor is lost. The repair's rewrite is held midway through the
/// ``FileOperationLog`` seam while another thread appends; no sleeps, every wait bounded.
@Suite(Hang.timeLimit(minutes: 2)) struct JournalRepairBesideAppendsTests {
    static let fileName = "event-queue.journal"

    /// The damage the load finds, each taking another path of the repair.
    enum Damage: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// A readable queue with an unreadable line: kept aside by a second name, then rewritten.
        case unreadableLine
        /// A first line that is no journal header, nothing readable after it: a copy is set aside,
        /// the queue starts empty.
        case unusableHeader
        /// The same, but this store appended before the load: its items (after the header its
        /// append wrote) are kept, and the copy set aside holds only the bytes it found.
        case unusableHeaderAfterAnAppend

        var testDescription: String { rawValue }

        /// Which temporary file of the repair is the rewrite of the queue: a copy set aside by
        /// copying bytes comes first.
        var rewrite: Int { self == .unreadableLine ? 1 : 2 }
    }

    /// Holds the `target`-th new temporary file's first write until released, and says when it
    /// holds it.
    final class Gate: Sendable {
        let target: Int
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private let seen = Locked<[String]>([])

        init(target: Int) { self.target = target }

        func intercept(_ path: String) {
            guard (path as NSString).lastPathComponent.hasPrefix(".\(JournalRepairBesideAppendsTests.fileName).tmp-") else { return }
            let hold = seen.withLock { seen -> Bool in
                guard !seen.contains(path) else { return false }
                seen.append(path)
                return seen.count == target
            }
            guard hold else { return }
            holding.signal()
            _ = release.wait(timeout: .now() + 60)
        }
    }

    /// Writes the damaged journal; returns the items the queue holds before the append made during
    /// the repair, and the bytes the copy set aside must hold exactly.
    static func damage(_ damage: Damage, in dir: TemporaryDirectory, store: FileEventQueueStore) throws -> (
        queued: [TrackedEvent], found: Data
    ) {
        switch damage {
        case .unreadableLine:
            let stored = Fixtures.events(2)
            let damaged = try JournalRecoveryFaultTests.writeJournalWithAnUnreadableLine(stored, in: dir)
            return (stored, damaged)
        case .unusableHeader:
            let damaged = Data("not a journal\n".utf8)
            try dir.write(damaged, to: fileName)
            return ([], damaged)
        case .unusableHeaderAfterAnAppend:
            let damaged = Data("{\"format\":\"something-else\",\"version\":1}\n".utf8)
            try dir.write(damaged, to: fileName)
            let before = Fixtures.events(1)
            try store.append(before[0])  // before anything was read (Behaviour R3)
            return (before, damaged)
        }
    }

    @Test(arguments: Damage.allCases)
    func r1_e4_anAppendDuringTheRepairOfADamagedQueueNeitherWaitsForItNorIsLost(damage: Damage) throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let (queued, found) = try Self.damage(damage, in: dir, store: store)
            let added = Fixtures.events(1)[0]

            let gate = Gate(target: damage.rewrite)
            let loaded = Locked<[TrackedEvent]?>(nil)
            let loadEnded = DispatchSemaphore(value: 0)
            let appended = Locked<Result<Void, SegmentsError>?>(nil)
            let appendEnded = DispatchSemaphore(value: 0)
            var appendedWhileTheRewriteWasHeld = false
            try FileOperationLog.intercepting(.write, under: dir.root.path, gate.intercept) {
                // The storage queue's load, which finds the damage and repairs it.
                DispatchQueue.global().async {
                    let items = store.load()
                    loaded.withLock { $0 = items }
                    loadEnded.signal()
                }
                try #require(gate.holding.wait(timeout: .now() + Hang.scaled(10)) == .success, "the repair rewrites the queue")
                // The app's thread tracks an event while the rewrite is held midway.
                DispatchQueue.global().async {
                    do throws(SegmentsError) {
                        try Self.append(added, to: store)
                        appended.withLock { $0 = .success(()) }
                    } catch {
                        appended.withLock { $0 = .failure(error) }
                    }
                    appendEnded.signal()
                }
                appendedWhileTheRewriteWasHeld = appendEnded.wait(timeout: .now() + 10) == .success
                gate.release.signal()
                if !appendedWhileTheRewriteWasHeld { _ = appendEnded.wait(timeout: .now() + 60) }
                try #require(loadEnded.wait(timeout: .now() + Hang.scaled(60)) == .success)
            }

            #expect(appendedWhileTheRewriteWasHeld, "the append waited for the repair's rewrite")
            #expect((try? appended.value?.get()) != nil, "the append succeeded: \(String(describing: appended.value))")
            let expected = queued + [added]
            #expect(loaded.value == expected, "the load answers the append made during the repair, once, last")
            #expect(store.load() == expected)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == expected, "the file holds it")
            // The file is the header, then one line per item, in order: the appended one once, last.
            let lines = (dir.text(of: Self.fileName) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.filter { $0.contains(added.id.uuidString) }.count == 1, "in the file exactly once")
            #expect(lines.count == expected.count + 2, "\(lines)")
            #expect(lines.first.map(String.init) == String(decoding: JournalHeader.line.dropLast(), as: UTF8.self))
            #expect(zip(lines.dropFirst(), expected).allSatisfy { $0.contains($1.id.uuidString) }, "\(lines)")
            #expect(lines.last == "", "the file ends with a complete line")
            let aside = dir.entries().filter { $0.hasPrefix(Self.fileName + ".corrupt-") }
            #expect(aside.count == 1, "\(dir.entries())")
            #expect(aside.first.flatMap { dir.contents(of: $0) } == found, "the copy set aside holds the bytes found, nothing appended")
        }
    }

    /// P2, P7: when the repaired file cannot replace the journal (its rename fails), the repair is
    /// undone — its temporary file and the second name it gave the damaged journal go, or the
    /// journal would have two names and be refused — and the full open repairs it instead.
    @Test func p2_p7_aRepairThatCannotReplaceTheJournalIsUndoneAndTheFullOpenRepairsIt() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let damaged = try JournalRecoveryFaultTests.writeJournalWithAnUnreadableLine(stored, in: dir)
            let log = LineLog(level: .warning)
            let loaded = FileOperationLog.failing([InjectedFileFault(.rename, errno: EIO)], under: dir.root.path) {
                FileEventQueueStore(directory: dir.storage, logger: log).load()
            }
            #expect(loaded == stored)
            #expect(log.problems.filter { $0.contains("unreadable records") }.count == 1, "said once: \(log.problems)")
            let aside = dir.entries().filter { $0.hasPrefix(Self.fileName + ".corrupt-") }
            #expect(aside.count == 1, "\(dir.entries())")
            #expect(aside.first.flatMap { dir.contents(of: $0) } == damaged)
            #expect(!dir.entries().contains { $0.contains(".tmp-") }, "\(dir.entries())")
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == stored)
            #expect(next.problems.isEmpty, "the journal is sound and has one name: \(next.problems)")
        }
    }

    private static func append(_ event: TrackedEvent, to store: FileEventQueueStore) throws(SegmentsError) {
        do { try store.append(event) } catch { throw SegmentsError.wrapping(error, as: .storage) }
    }
}
