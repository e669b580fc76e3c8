import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// A deeply nested body from a server (or a datafile) is refused before the recursive decoder sees
/// it: on Apple platforms a secondary thread has 512 KiB of stack, which a few hundred levels
/// decoded into `JSONValue` would overflow — a crash of the app, caused by the network.
@Suite(Hang.timeLimit(minutes: 2)) struct DeepJSONTests {
    /// `[[[…]]]`, `depth` levels: below the 512-level limit of Foundation's own JSON scanner, so
    /// without the check it reaches the recursive `JSONValue` decoding.
    static func nested(_ depth: Int, inside key: String? = nil) -> Data {
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        return Data((key.map { "{\"\($0)\": \(arrays)}" } ?? arrays).utf8)
    }

    @Test func deepSegmentsAnswerIsAnInvalidResponseNotACrash() async {
        let body = Self.nested(500, inside: "discovery")
        let code = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) { () -> SegmentsError.Code? in
            do {
                _ = try BloomreachSegmentsDecoder.decode(body, logger: LogRecorder())
                return nil
            } catch {
                return (error as? SegmentsError)?.code
            }
        }
        #expect(code == .invalidResponse)
    }

    @Test func deepODPAnswerIsADecodeErrorNotACrash() async {
        let body = Self.nested(500, inside: "data")
        let code = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) { () -> SegmentsError.Code? in
            do {
                _ = try ODPResponseDecoder.qualifiedSegments(from: body)
                return nil
            } catch {
                return (error as? SegmentsError)?.code
            }
        }
        #expect(code == .invalidResponse)
    }

    @Test func deepDatafileIsRefused() async {
        let body = Self.nested(500, inside: "typedAudiences")
        let refused = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) { (try? ODPDatafile.candidateSegments(from: body)) == nil }
        #expect(refused)
    }

    @Test func theDepthCheckIgnoresBracketsInStringsAndAcceptsRealAnswers() {
        #expect(!JSONDepth.exceeds(in: Data(#"{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}"#.utf8)))
        #expect(!JSONDepth.exceeds(in: Data(#"{"a": "\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}"#.utf8)))
        #expect(JSONDepth.exceeds(in: Self.nested(65)))
        #expect(!JSONDepth.exceeds(in: Self.nested(64)))
    }
}
