import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour R2, R3 at the journal: an append is written (not synced) before it returns, appends made
/// before the queue was read are kept, and damage found by the late read loses none of them.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct JournalBackgroundLoadTests {
    static let fileName = "event-queue.journal"

    @Test func r2_anAppendIsInTheFileWhenItReturnsWithoutASync() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for event in events { try store.append(event) }
            // A new instance reads the file: what a restart after SIGKILL would find.
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == events)
            try store.sync()
            withExtendedLifetime(store) {}
        }
    }

    @Test func r3_appendsMadeBeforeTheQueueIsReadFollowItAndSurviveARestart() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(200)
            do {
                let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in stored { try writer.append(event) }
                try writer.remove(id: stored[0].id)
            }
            let later = Fixtures.events(2)
            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            for event in later { try store.append(event) }  // before anything was read
            let expected = Array(stored.dropFirst()) + later
            #expect(store.load() == expected)
            try store.remove(id: stored[1].id)
            #expect(FileEventQueueStore(directory: dir.storage, logger: log).load() == Array(expected.dropFirst()))
            #expect(log.lines.isEmpty)
        }
    }

    @Test func r3_p2_aTornLastLineFoundAfterTheFirstAppendIsDroppedWithoutSettingTheFileAside() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            do {
                let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in stored { try writer.append(event) }
            }
            let torn = try #require(dir.contents(of: Self.fileName)) + Data(#"{"op":"append","event":{"id":"#.utf8)
            try dir.write(torn, to: Self.fileName)
            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            let added = Fixtures.events(1)
            try store.append(added[0])
            #expect(store.load() == stored + added)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == stored + added)
            #expect(dir.entries().filter { $0.contains("corrupt") }.isEmpty)
            #expect(log.lines.contains { $0.contains("incomplete last record") })
        }
    }

    @Test func p2_aDamagedJournalWithATornTailIsSetAsideByteForByteBeforeTheFirstAppend() throws {
        try TemporaryDirectory.with { dir in
            let original = Data("{\"format\":\"event-queue-journal\",\"version\":1}\nnot json\n{\"op\":\"app".utf8)
            try dir.write(original, to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let added = Fixtures.events(1)
            try store.append(added[0])
            #expect(store.load() == added)
            let aside = dir.entries().filter { $0.contains("corrupt") }
            #expect(aside.count == 1)
            #expect(aside.first.flatMap { dir.contents(of: $0) } == original)
        }
    }

    @Test func r3_p2_aFileSetAsideByTheLateReadKeepsTheAppendsMadeBeforeIt() throws {
        try TemporaryDirectory.with { dir in
            try dir.write("{\"format\":\"something-else\",\"version\":1}\n", to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let added = Fixtures.events(2)
            for event in added { try store.append(event) }
            #expect(Set(store.load().map(\.id)) == Set(added.map(\.id)))
            #expect(Set(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load().map(\.id)) == Set(added.map(\.id)))
            #expect(dir.entries().contains { $0.contains("corrupt") })
        }
    }
}

extension JournalBackgroundLoadTests {
    /// Compaction writes the new file without the store's lock; appends and removals made
    /// meanwhile are carried over. Whatever the interleaving, a restart finds exactly the queue.
    @Test func e4_r1_appendsAndRemovalsDuringCompactionsAreAllKept() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let initial = Fixtures.events(1_500)
            for event in initial { try store.append(event) }
            let added = Fixtures.events(1_500)
            let failures = Locked(0)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    // Appends and removals interleave on two threads; the dead lines reach the live
                    // ones half-way, so compactions run while appends go on.
                    DispatchQueue.concurrentPerform(iterations: added.count + initial.count) { index in
                        do {
                            if index % 2 == 0 {
                                try store.append(added[index / 2])
                            } else {
                                try store.remove(id: initial[index / 2].id)
                            }
                        } catch {
                            failures.withLock { $0 += 1 }
                        }
                    }
                    done.resume()
                }
            }
            #expect(failures.value == 0)
            #expect(Set(store.load().map(\.id)) == Set(added.map(\.id)))
            #expect(Set(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load().map(\.id)) == Set(added.map(\.id)))
            let lines = (dir.text(of: Self.fileName) ?? "").split(separator: "\n").count
            #expect(lines < 1 + added.count + initial.count * 2, "the file was compacted (\(lines) lines)")
        }
    }
}
