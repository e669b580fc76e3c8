import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P7 rev 4 (issue 31, findings 2, 4 and 5), measured: the peak memory a load adds, in a
/// child process of its own (``ChildMemory``), so the tests running beside it in this process do
/// not count. Each test writes its file here, then runs itself again as the child, which only loads.
/// Benchmark 8 (8c–8i) measures the same loads at full size in a release build.
@Suite(Hang.timeLimit(minutes: 3), .onDedicatedThread) struct StoredFileMemoryTests {
    /// Runs `load` in the child, or, in the parent, writes the file with `write`, runs the child and
    /// returns its figure and the file's length.
    private static func measure(
        _ test: String, name: String, _ write: () throws -> Data, load: @escaping (URL) throws -> Any
    ) throws -> (peak: Int, fileBytes: Int)? {
        #if os(Linux)
        if ChildMemory.underSanitizer {
            // AddressSanitizer's shadow memory and freed-memory quarantine count in the peak (a
            // queue of 42 MB measured 375 MiB there): the bound is the SDK's, measured without one.
            withKnownIssue("peak memory is not measured under a sanitizer; the plain run measures it") {
                Issue.record("not measured")
            }
            return nil
        }
        if let folder = ChildMemory.childFolder {
            try ChildMemory.measure(in: folder) { try load(folder.appendingPathComponent("storage")) }
            return nil
        }
        return try TemporaryDirectory.with { dir in
            let data = try write()
            try dir.write(data, to: name)
            return (try ChildMemory.peakBytes(ofTest: test, folder: dir.root), data.count)
        }
        #else
        withKnownIssue("measured in a child process on Linux only; benchmark 8 measures elsewhere") {
            Issue.record("not measured")
        }
        return nil
        #endif
    }

    private static func loadQueue(_ storage: URL) -> Any {
        FileEventQueueStore(directory: storage, logger: LineLog()).load()
    }

    /// Finding 2: one line `{"a":[[],[],…]}` after a header cost 1 GiB for a 48 MiB file (a tree of
    /// the whole line, then a second copy of the file while the first was held). Now the line is
    /// skipped unread and the file is held once at a time.
    @Test func p7_aJournalWithOneOverlongLineCostsAboutItsBytes() throws {
        guard
            let (peak, bytes) = try Self.measure(
                "p7_aJournalWithOneOverlongLineCostsAboutItsBytes", name: EventJournal.fileName,
                {
                    var data = JournalHeader.line
                    data.append(contentsOf: Array(#"{"a":["#.utf8))
                    for index in 0..<(16 << 20) / 3 { data.append(contentsOf: Array((index == 0 ? "[]" : ",[]").utf8)) }
                    data.append(contentsOf: Array("]}\n".utf8))
                    return data
                }, load: Self.loadQueue)
        else { return }
        #expect(peak <= 2 * bytes, "the load added \(peak >> 20) MiB for a file of \(bytes >> 20) MiB")
    }

    /// Finding 4: a queue of events whose properties are 64 KiB arrays of empty arrays (each
    /// passing the 64 KiB rule) cost 12× its bytes as trees.
    @Test func p7_aQueueOf64KiBArrayEventsCostsAtMost4xItsBytes() throws {
        guard
            let (peak, bytes) = try Self.measure(
                "p7_aQueueOf64KiBArrayEventsCostsAtMost4xItsBytes", name: EventJournal.fileName,
                {
                    let elements = (ReplayableEvent.maximumEncodedSize - 9) / 3
                    var data = JournalHeader.line
                    for _ in 0..<150 {
                        let event = TrackedEvent(
                            kind: .event(type: "arrays"), customerIds: Fixtures.identified,
                            properties: ["a": .array(Array(repeating: .array([]), count: elements))],
                            timestamp: Date(timeIntervalSinceReferenceDate: 1))
                        try ReplayableEvent.check(event.properties)
                        data.append(try JournalEntry.append(event).line())
                    }
                    return data
                }, load: Self.loadQueue)
        else { return }
        #expect(peak <= 4 * bytes, "the load added \(peak >> 20) MiB for a file of \(bytes >> 20) MiB")
    }

    /// Finding 4: a queue of typical events (six properties, two customer ids) cost 4.6× its bytes.
    @Test func p7_aQueueOfTypicalEventsCostsAtMost4xItsBytes() throws {
        guard
            let (peak, bytes) = try Self.measure(
                "p7_aQueueOfTypicalEventsCostsAtMost4xItsBytes", name: EventJournal.fileName,
                {
                    var data = JournalHeader.line
                    for index in 0..<30_000 { data.append(try JournalEntry.append(Fixtures.event(index)).line()) }
                    return data
                }, load: Self.loadQueue)
        else { return }
        #expect(peak <= 4 * bytes, "the load added \(peak >> 20) MiB for a file of \(bytes >> 20) MiB")
    }

    /// Finding 5: a valid customer document padded to 8 MiB cost 234 MiB at configure (three parses
    /// of the padding). Now the file is past the customer file's 64 KiB cap: set aside unread.
    @Test func p7_an8MiBPaddedCustomerFileCostsAlmostNothing() throws {
        guard
            let (peak, _) = try Self.measure(
                "p7_an8MiBPaddedCustomerFileCostsAlmostNothing", name: FileCustomerStore.fileName,
                { DocumentSizeTests.paddedCustomer(bytes: (8 << 20) - 1024) },
                load: { FileCustomerStore(directory: $0, logger: LineLog()).load() as Any })
        else { return }
        #expect(peak <= 4 << 20, "the load added \(peak >> 20) MiB")
    }

    /// Finding 2: the 64 KiB rule stacked every element of an array before it tested the size, so a
    /// huge array (4,000,000 elements here) took a stack of as many entries before it was refused;
    /// now the size is tested before the elements are stacked.
    @Test func e6_theSizeRuleRefusesAHugeArrayWithoutStackingItsElements() throws {
        #if os(Linux)
        let test = "e6_theSizeRuleRefusesAHugeArrayWithoutStackingItsElements"
        if let folder = ChildMemory.childFolder {
            let properties: [String: JSONValue] = ["a": .array(Array(repeating: .null, count: 4_000_000))]
            try ChildMemory.measure(in: folder) { (try? ReplayableEvent.check(properties)) == nil }
            return
        }
        try TemporaryDirectory.with { dir in
            let peak = try ChildMemory.peakBytes(ofTest: test, folder: dir.root)
            #expect(peak <= 8 << 20, "the check added \(peak >> 20) MiB")
        }
        #else
        withKnownIssue("measured in a child process on Linux only") { Issue.record("not measured") }
        #endif
    }
}
