import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// Behaviour P9 for the network paths: an event at the 64-level limit is encoded and uploaded, and
/// Bloomreach and ODP answers at their limit are decoded, on 512 KiB threads (Apple's
/// secondary-thread stack, imposed here on Linux, whose 8 MiB default would hide an overflow).
/// Too deep a limit crashes these tests rather than an app.
@Suite(Hang.timeLimit(minutes: 2)) struct P9NetworkingStackDepthTests {
    /// An event whose properties nest `levels` deep (the properties object is level 1).
    static func event(nesting levels: Int, arrays: Bool) -> TrackedEvent {
        var value: JSONValue = .string("bottom")
        for _ in 0..<(levels - 1) {
            value = arrays ? .array([value]) : .object(["k": value])
        }
        return TrackedEvent(
            kind: .event(type: "deep"), customerIds: CustomerIds(cookie: "c"), properties: ["k": value],
            timestamp: Date(timeIntervalSince1970: 1_732_249_200))
    }

    /// `{"<key>": {"k": … {"k": "v"}}}` (or arrays inside the key), nesting `depth` levels in all.
    static func body(depth: Int, key: String, arrays: Bool) -> Data {
        let inner = depth - 1
        let nested =
            arrays
            ? String(repeating: "[", count: inner) + #""v""# + String(repeating: "]", count: inner)
            : String(repeating: #"{"k":"#, count: inner - 1) + #"{"k":"v"}"# + String(repeating: "}", count: inner - 1)
        return Data(#"{"\#(key)":\#(nested)}"#.utf8)
    }

    /// How deeply `data`'s arrays and objects nest.
    static func depth(of data: Data) -> Int {
        var depth = 0
        while JSONDepth.exceeds(depth, in: data) { depth += 1 }
        return depth
    }

    @Test(arguments: [false, true])
    func p9_anEventAtTheLimitIsEncodedAsAnUploadBodyOnA512KiBThread(arrays: Bool) async throws {
        let event = Self.event(nesting: ReplayableEvent.maximumDepth, arrays: arrays)
        try ReplayableEvent.check(event.properties)
        let body = try await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            try BloomreachBodies.tracking(event)
        }
        #expect(Self.depth(of: body) == ReplayableEvent.maximumDepth + 1, "the properties inside the body's object")
        #expect(Self.depth(of: body) <= JSONDepth.envelopeMaximum)
        let sent = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(sent["event_type"] as? String == "deep")
    }

    @Test(arguments: [false, true])
    func p9_anEventAtTheLimitIsUploadedFromA512KiBThread(arrays: Bool) async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return }
        let harness = Harness()
        let event = Self.event(nesting: ReplayableEvent.maximumDepth, arrays: arrays)
        let executor = DedicatedThreadExecutor(stackSize: appleSecondaryThreadStackSize)
        // The uploader's code — the body's encoding, the transport call — runs on the executor's
        // 512 KiB thread, as it runs on a 512 KiB cooperative thread on Apple platforms.
        let onSmallStack = try await Task(executorPreference: executor) {
            let before = executor.isCurrent
            try await harness.uploader.upload(event)
            return before && executor.isCurrent
        }.value
        #expect(onSmallStack, "the task ran on the executor's thread")
        #expect(executor.jobsRun > 0)
        let request = try #require(harness.transport.requests.first)
        #expect(harness.transport.requests.count == 1)
        #expect(Self.depth(of: request.body ?? Data()) == ReplayableEvent.maximumDepth + 1)
    }

    @Test(arguments: [false, true])
    func p9_aSegmentsAnswerAtTheLimitIsDecodedOnA512KiBThread(arrays: Bool) async throws {
        let atLimit = Self.body(depth: JSONDepth.maximum, key: "discovery", arrays: arrays)
        let deeper = Self.body(depth: JSONDepth.maximum + 1, key: "discovery", arrays: arrays)
        let messages = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            [atLimit, deeper].map { body -> String? in
                do {
                    _ = try BloomreachSegmentsDecoder.decode(body, logger: LogRecorder())
                    return nil
                } catch {
                    return (error as? SegmentsError)?.message
                }
            }
        }
        // At the limit the body reaches the recursive decoder, which reads it and finds the wrong
        // shape; one level deeper it is refused before decoding.
        #expect(messages[0]?.contains("category 'discovery' is not an array") == !arrays)
        #expect(messages[0]?.contains("nests deeper") == false)
        #expect(messages[1]?.contains("nests deeper than \(JSONDepth.maximum) levels") == true)
    }

    @Test(arguments: [false, true])
    func p9_anODPAnswerAtTheLimitIsDecodedOnA512KiBThread(arrays: Bool) async throws {
        let atLimit = Self.body(depth: JSONDepth.maximum, key: "data", arrays: arrays)
        let deeper = Self.body(depth: JSONDepth.maximum + 1, key: "data", arrays: arrays)
        let messages = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            [atLimit, deeper].map { body -> String? in
                do {
                    _ = try ODPResponseDecoder.decode(body)
                    return nil
                } catch {
                    return (error as? SegmentsError)?.message
                }
            }
        }
        // At the limit the recursive decoder reads it and finds no answer in it.
        #expect(messages[0]?.contains(arrays ? "no data object" : "decode error") == true)
        #expect(messages[0]?.contains("nests deeper") == false)
        #expect(messages[1]?.contains("nests deeper than \(JSONDepth.maximum) levels") == true)
    }
}
