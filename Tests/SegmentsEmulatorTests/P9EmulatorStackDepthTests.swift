import Foundation
@testable import SegmentsEmulator
import SegmentsTesting
import Testing

/// Behaviour P9 for the emulator: its threads get an explicit stack size, and a body nested deeper
/// than ``EmulatorJSON/maximumDepth`` is answered with 400 before the recursive decoder sees it.
/// Here the threads get Apple's 512 KiB (the default is 1 MiB; Linux's own 8 MiB would hide an
/// overflow), and a body at the limit must still be read.
@Suite(Hang.timeLimit(minutes: 2)) struct P9EmulatorStackDepthTests {
    /// An event body whose JSON nests `depth` levels: `{"properties":{"p":…}}` and more around it.
    static func eventBody(depth: Int, arrays: Bool) -> String {
        // The body object and `properties` are two levels; `p`'s value nests the rest.
        let inner = depth - 2
        let value =
            arrays
            ? String(repeating: "[", count: inner) + "1" + String(repeating: "]", count: inner)
            : String(repeating: #"{"k":"#, count: inner) + "1" + String(repeating: "}", count: inner)
        return #"{"customer_ids":{"cookie":"c"},"event_type":"deep","properties":{"p":\#(value)}}"#
    }

    static func status(of body: String, port: UInt16) throws -> Int? {
        try statusOfPost(Array(body.utf8), to: "/track/v2/projects/t/customers/events", port: port)
    }

    @Test func p9_aBodyTooDeepIsAnswered400OnA512KiBStackAndOneAtTheLimitIsRead() throws {
        var limits = EmulatorLimits()
        limits.threadStackSize = appleSecondaryThreadStackSize
        let emulator = SegmentsEmulator(limits: limits)
        try emulator.start()
        defer { emulator.stop() }
        let port = try #require(emulator.port)
        let limit = EmulatorJSON.maximumDepth
        for arrays in [false, true] {
            let body = Self.eventBody(depth: limit, arrays: arrays)
            #expect(JSONDepthProbe.depth(of: body) == limit)
            #expect(try Self.status(of: body, port: port) == 200, "at the limit, arrays: \(arrays)")
        }
        #expect(emulator.events.count == 2, "both bodies at the limit were read")
        for depth in [limit + 1, 128, 1_000] {
            for arrays in [false, true] {
                #expect(try Self.status(of: Self.eventBody(depth: depth, arrays: arrays), port: port) == 400,
                        "\(depth) levels, arrays: \(arrays)")
            }
        }
        #expect(emulator.isRunning)
        #expect(emulator.events.count == 2)
    }
}

/// How deeply a JSON text nests, counted without recursion (brackets in these bodies are never
/// inside strings).
enum JSONDepthProbe {
    static func depth(of text: String) -> Int {
        var depth = 0
        var deepest = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                depth += 1
                deepest = max(deepest, depth)
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                depth -= 1
            }
        }
        return deepest
    }
}
