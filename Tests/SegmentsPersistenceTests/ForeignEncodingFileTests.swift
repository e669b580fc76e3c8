import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P7 rev 4 and P9 for every stored file: a file in UTF-16 or UTF-32 (by its zero bytes
/// or a byte-order mark) is set aside unread, with the reason in the log, before any parser sees
/// it. Foundation's decoders would convert it, hiding its nesting from the UTF-8 depth scan. The
/// loads run on 512 KiB threads, so a regression that lets one through to a recursive decoder
/// crashes the run.
@Suite(Hang.timeLimit(minutes: 2)) struct ForeignEncodingFileTests {
    /// A 500-level text where a document's version would be, in every foreign encoding.
    private static let samples = ForeignEncodings.samples(of: ForeignEncodings.deeplyNested(levels: 500, inside: "version"))
    /// The same at 100 levels (still past the limit), short enough (at most 836 bytes in UTF-32)
    /// for the journal to decode it as a header: a longer first line is not a header at all.
    private static let headerSamples = ForeignEncodings.samples(of: ForeignEncodings.deeplyNested(levels: 100, inside: "version"))

    /// For each sample: what `load` returned, and the warnings logged, after `name` was given it.
    private static func outcomes<Loaded: Sendable>(
        file name: String, lineEnd: Data = Data(), samples: [ForeignEncodings.Sample] = samples, _ load: @escaping @Sendable (TemporaryDirectory, LineLog) -> Loaded
    ) async throws -> [(sample: String, loaded: Loaded, problems: [String], entries: [String])] {
        var results: [(String, Loaded, [String], [String])] = []
        for sample in samples {
            try await TemporaryDirectory.withAsync { dir in
                try dir.write(sample.data + lineEnd, to: name)
                let log = LineLog(level: .warning)
                let loaded = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) { load(dir, log) }
                results.append((sample.name, loaded, log.problems, dir.entries()))
            }
        }
        return results
    }

    private static func expectSetAsideAsNotUTF8(_ problems: [String], _ entries: [String], file: String, sample: String) {
        #expect(problems.count == 1, "\(sample): \(problems)")
        #expect(problems.first?.contains("not UTF-8") == true, "\(sample): \(problems)")
        #expect(entries.contains("\(file).corrupt-1"), "\(sample): \(entries)")
    }

    @Test func p7_p9_aCustomerFileInUTF16OrUTF32IsSetAsideUnread() async throws {
        let results = try await Self.outcomes(file: "customer.json") { dir, log in
            FileCustomerStore(directory: dir.storage, logger: log).load()
        }
        #expect(results.count == 7)
        for result in results {
            #expect(result.loaded == nil, "\(result.sample)")
            Self.expectSetAsideAsNotUTF8(result.problems, result.entries, file: "customer.json", sample: result.sample)
        }
    }

    @Test func p7_p9_aBaselineInUTF16OrUTF32IsSetAsideUnread() async throws {
        let results = try await Self.outcomes(file: "segment-baseline.json") { dir, log in
            FileSegmentBaselineStore(directory: dir.storage, logger: log).load()
        }
        #expect(results.count == 7)
        for result in results {
            #expect(result.loaded == SegmentBaseline(), "\(result.sample)")
            Self.expectSetAsideAsNotUTF8(result.problems, result.entries, file: "segment-baseline.json", sample: result.sample)
        }
    }

    @Test func p7_p9_aVisitorFileInUTF16OrUTF32IsSetAsideUnread() async throws {
        let results = try await Self.outcomes(file: "visitor-segments.json") { dir, log in
            FileVisitorSegmentsStore(directory: dir.storage, logger: log).segments(forVisitor: "v")
        }
        #expect(results.count == 7)
        for result in results {
            #expect(result.loaded == nil, "\(result.sample)")
            Self.expectSetAsideAsNotUTF8(result.problems, result.entries, file: "visitor-segments.json", sample: result.sample)
        }
    }

    @Test func p7_p9_aJournalWhoseHeaderIsUTF16OrUTF32IsSetAsideUnread() async throws {
        // The header is the first line: the text, then a newline byte.
        let results = try await Self.outcomes(
            file: "event-queue.journal", lineEnd: Data([0x0A]), samples: Self.headerSamples
        ) { dir, log in
            FileEventQueueStore(directory: dir.storage, logger: log).load()
        }
        #expect(results.count == 7)
        for result in results {
            #expect(result.loaded.isEmpty, "\(result.sample)")
            Self.expectSetAsideAsNotUTF8(result.problems, result.entries, file: "event-queue.journal", sample: result.sample)
        }
    }
}
