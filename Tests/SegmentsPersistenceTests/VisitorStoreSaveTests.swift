import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Saving one visitor keeps the others stored (see Behaviour V3): a store that has not read its
/// file yet reads it before writing, so a save after a restart never drops another visitor.
@Suite(Hang.timeLimit(minutes: 1)) struct VisitorStoreSaveTests {
    @Test func v3_aSaveBeforeAnyReadKeepsTheVisitorsAlreadyStored() throws {
        try TemporaryDirectory.with { dir in
            let jane = VisitorSegments(country: "US")
            let joe = VisitorSegments(browser: "safari")
            try FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).save(jane, forVisitor: "jane")
            // A new instance, as after a restart: it saves before it has read anything.
            try FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).save(joe, forVisitor: "joe")
            let reader = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(reader.segments(forVisitor: "jane") == jane)
            #expect(reader.segments(forVisitor: "joe") == joe)
        }
    }
}
