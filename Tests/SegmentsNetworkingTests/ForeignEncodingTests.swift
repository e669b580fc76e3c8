import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// Behaviour P7 rev 4 and P9 for every JSON the network brings: a body in UTF-16 or UTF-32 (by its
/// zero bytes or a byte-order mark) is refused before any parsing. Foundation's decoders convert
/// such a body, while the depth scan reads bytes as UTF-8: `["Ģ",` + 500 levels in UTF-16LE passed
/// the scan at depth 1 and overflowed a 512 KiB stack in the recursive decoder (a crash of the app
/// at every fetch). Each test runs on a 512 KiB thread, so a regression crashes the test run.
@Suite(Hang.timeLimit(minutes: 2)) struct ForeignEncodingTests {
    /// Every foreign encoding of a 500-level text, wrapped in `key` when given.
    private static func hostile(inside key: String? = nil) -> [ForeignEncodings.Sample] {
        ForeignEncodings.samples(of: ForeignEncodings.deeplyNested(levels: 500, inside: key))
    }

    /// What `decode` throws for each sample on a 512 KiB thread (`nil` where it returned).
    private static func failures(
        _ samples: [ForeignEncodings.Sample], _ decode: @escaping @Sendable (Data) throws -> Void
    ) async -> [(name: String, error: SegmentsError?)] {
        await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            samples.map { sample in
                do {
                    try decode(sample.data)
                    return (sample.name, nil)
                } catch {
                    return (sample.name, error as? SegmentsError)
                }
            }
        }
    }

    private static func expectRefusedAsNotUTF8(_ results: [(name: String, error: SegmentsError?)]) {
        #expect(results.count == 7)
        for (name, error) in results {
            #expect(error?.code == .invalidResponse, "\(name)")
            #expect(error?.message.contains("not UTF-8") == true, "\(name): \(String(describing: error))")
        }
    }

    @Test func p7_p9_aSegmentsAnswerInUTF16OrUTF32IsRefusedBeforeParsing() async {
        let results = await Self.failures(Self.hostile()) { body in
            _ = try BloomreachSegmentsDecoder.decode(body, logger: LogRecorder())
        }
        Self.expectRefusedAsNotUTF8(results)
    }

    @Test func p7_p9_anODPAnswerInUTF16OrUTF32IsRefusedBeforeParsing() async {
        let results = await Self.failures(Self.hostile(inside: "data")) { body in
            _ = try ODPResponseDecoder.decode(body)
        }
        Self.expectRefusedAsNotUTF8(results)
    }

    @Test func p7_p9_aDatafileInUTF16OrUTF32IsRefusedBeforeParsing() async {
        let results = await Self.failures(Self.hostile(inside: "typedAudiences")) { body in
            _ = try ODPDatafile.candidateSegments(from: body)
        }
        Self.expectRefusedAsNotUTF8(results)
    }

    /// A condition tree given as a JSON string is parsed too. A string may hold U+0000 and U+0001,
    /// so its UTF-8 bytes can be exactly a UTF-16LE text: that text is skipped, not parsed, and the
    /// datafile's other conditions still count.
    @Test func p7_p9_aConditionStringThatIsUTF16IsSkippedNotParsed() async throws {
        let candidates = try await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            try Self.hostile().map { sample -> [String] in
                let hidden = String(decoding: sample.data, as: UTF8.self)
                let datafile: JSONValue = .object([
                    "typedAudiences": .array([
                        .object(["conditions": .string(hidden)]),
                        .object(["conditions": .array([.object(["match": "qualified", "value": "kept"])])]),
                    ])
                ])
                return try ODPDatafile.candidateSegments(from: JSONEncoder().encode(datafile))
            }
        }
        #expect(candidates.count == 7)
        #expect(candidates.allSatisfy { $0 == ["kept"] })
    }

    @Test func p7_theSameTextInUTF8IsStillReadAndRefusedOnlyForItsDepth() async {
        let results = await Self.failures([
            ForeignEncodings.Sample(name: "UTF-8", data: Data(ForeignEncodings.deeplyNested(levels: 500).utf8)),
            ForeignEncodings.Sample(name: "UTF-8 with BOM", data: Data([0xEF, 0xBB, 0xBF]) + Data(#"{"discovery":[]}"#.utf8)),
        ]) { body in
            _ = try BloomreachSegmentsDecoder.decode(body, logger: LogRecorder())
        }
        #expect(results[0].error?.message.contains("nests deeper than \(JSONDepth.maximum) levels") == true)
        // A UTF-8 byte-order mark leaves the text UTF-8: it is not a reason to refuse.
        #expect(results[1].error?.message.contains("not UTF-8") != true, "\(String(describing: results[1].error))")
    }
}
