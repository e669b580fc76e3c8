import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// A journal whose first line is unusable but which has a sound header later is recovered once
/// (see Behaviour P2): the damaged bytes are set aside and the journal rewritten, so the next start
/// finds a sound file and sets nothing aside again.
@Suite(Hang.timeLimit(minutes: 1)) struct LaterHeaderRecoveryTests {
    static let fileName = "event-queue.journal"

    @Test func p2_aJournalRecoveredFromAnUnusableFirstLineIsSoundAtTheNextStart() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(2)
            let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for event in stored { try writer.append(event) }
            try writer.sync()
            let valid = try #require(dir.contents(of: Self.fileName))
            try dir.write(Data("\n".utf8) + valid, to: Self.fileName)

            let first = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: first).load() == stored)
            #expect(!first.problems.isEmpty)
            let next = LineLog(level: .warning)
            #expect(FileEventQueueStore(directory: dir.storage, logger: next).load() == stored)
            #expect(next.problems.isEmpty, "\(next.problems)")
            #expect(dir.entries().filter { $0.contains("corrupt") }.count == 1)
        }
    }
}
