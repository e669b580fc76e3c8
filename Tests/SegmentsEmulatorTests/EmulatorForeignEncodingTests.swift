import Foundation
@testable import SegmentsEmulator
import SegmentsTesting
import Testing

/// Behaviour P7 rev 4 for the emulator (issue 31, findings 1 and 8): a request body in UTF-16 or
/// UTF-32 is answered 400 before any parsing. Foundation's decoder converts such a body while the
/// depth scan reads it as UTF-8, so `["Ģ",` + 500 levels in UTF-16LE got past the scan and
/// overflowed a connection thread's stack: any local process could end `segments serve`.
@Suite(Hang.timeLimit(minutes: 2)) struct EmulatorForeignEncodingTests {
    private static func samples(inside key: String? = nil) -> [ForeignEncodings.Sample] {
        ForeignEncodings.samples(of: ForeignEncodings.deeplyNested(levels: 500, inside: key))
    }

    @Test func p7_p9_aRequestBodyInUTF16OrUTF32IsAnswered400OnA512KiBStack() throws {
        var limits = EmulatorLimits()
        limits.threadStackSize = appleSecondaryThreadStackSize
        let emulator = SegmentsEmulator(limits: limits)
        try emulator.start()
        defer { emulator.stop() }
        let port = try #require(emulator.port)
        let targets = ["/v3/graphql", "/track/v2/projects/t/customers/events", "/track/v2/projects/t/customers"]
        for target in targets {
            for sample in Self.samples(inside: "query") {
                #expect(try statusOfPost(Array(sample.data), to: target, port: port) == 400, "\(target) \(sample.name)")
            }
        }
        #expect(emulator.isRunning)
        #expect(emulator.events.isEmpty)
        // It still reads a UTF-8 body.
        let event = #"{"customer_ids":{"cookie":"c"},"event_type":"view","properties":{"p":"Ģ"}}"#
        #expect(try statusOfPost(Array(event.utf8), to: targets[1], port: port) == 200)
        #expect(emulator.events.count == 1)
    }

    /// A rules document whose property test holds `value`.
    private static func rules(equals value: String) -> String {
        #"{"rules":[{"category":"c","segment_id":"s","segmentation_id":"g","event_type":"e","property":{"name":"p","equals":"#
            + value + "}}]}"
    }

    @Test func p7_p9_emulatorJSONAndRuleFilesRefuseEveryForeignEncodingOnA512KiBStack() async {
        let deep = ForeignEncodings.deeplyNested(levels: 500)
        let outcomes = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            zip(Self.samples(), ForeignEncodings.samples(of: Self.rules(equals: deep))).map { json, rules in
                (json.name, (try? EmulatorJSON(jsonData: json.data)) == nil, (try? EmulatorRuleSet(jsonData: rules.data)) == nil)
            }
        }
        #expect(outcomes.count == 7)
        for (name, jsonRefused, rulesRefused) in outcomes {
            #expect(jsonRefused, "\(name)")
            #expect(rulesRefused, "\(name)")
        }
        #expect(throws: DecodingError.self) { try EmulatorJSON(jsonData: Self.samples()[0].data) }
        // The same documents in UTF-8: the rules are read at a small depth, refused at 500 levels.
        let utf8 = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            ((try? EmulatorRuleSet(jsonData: Data(Self.rules(equals: #"["Ģ",[[1]]]"#).utf8))) != nil,
             (try? EmulatorRuleSet(jsonData: Data(Self.rules(equals: deep).utf8))) == nil)
        }
        #expect(utf8.0, "a UTF-8 rules document is read")
        #expect(utf8.1, "a UTF-8 rules document nested 500 levels is refused")
    }
}
