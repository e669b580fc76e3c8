import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsPersistence

/// `segments-bench stack-probe <path> <shape> <depth>`: runs one JSON path of the SDK or the
/// emulator on a 512 KiB thread (Apple's secondary-thread stack) at `depth` levels of nesting and
/// exits 0 when it finished. Too deep a recursion overflows the stack and kills the process with
/// a signal, which is the measurement: `Scripts/stack-depth.sh` searches for the deepest text each
/// path survives and writes `Docs/StackDepth.json` (Behaviour P9 in `Docs/Behaviour.md`).
///
/// `segments-bench stack-probe limits` prints the limits the SDK and the emulator apply, as JSON.
///
/// `depth` is the nesting of the JSON text the path reads or writes: for the upload body and the
/// journal line it includes their envelope (1 and 2 levels around the properties).
enum StackProbe {
    static let stackSize = 512 * 1024

    /// The measured paths, by name.
    static let paths: [String: @Sendable (_ shape: Shape, _ depth: Int) throws -> Void] = [
        // Bloomreach and ODP answers, stored documents: `JSONDecoder` into `JSONValue`.
        "json-decoder": { shape, depth in _ = try JSONDecoder().decode(JSONValue.self, from: text(shape, depth)) },
        // Foundation's untyped parser, for comparison.
        "json-serialization": { shape, depth in _ = try JSONSerialization.jsonObject(with: text(shape, depth)) },
        // The upload body of an event (`{"properties":{…},…}`), `JSONEncoder` with sorted keys.
        "upload-body-encoder": { shape, depth in _ = try BloomreachBodies.tracking(event(shape, depth - 1)) },
        // The event journal's reader and writer (properties inside `{"event":{"properties":…}}`).
        "journal-reader": { shape, depth in _ = try JSONReader.value(from: text(shape, depth), maximumDepth: .max) },
        "journal-writer": { shape, depth in
            _ = try JournalLineWriter.appendLine(for: event(shape, depth - 2), maximumDepth: .max)
        },
        // The emulator's request bodies, decoded and encoded.
        "emulator-decoder": { shape, depth in _ = try JSONDecoder().decode(EmulatorJSON.self, from: text(shape, depth)) },
        "emulator-encoder": { shape, depth in
            _ = try JSONDecoder().decode(EmulatorJSON.self, from: text(shape, depth)).encodedData()
        },
    ]

    /// How the levels nest: `{"k":{"k":…}}` or `[[…]]`.
    enum Shape: String, CaseIterable {
        case object
        case array
    }

    static func run(_ arguments: [String]) -> Int32 {
        if arguments == ["limits"] {
            let limits: [String: Int] = [
                "eventProperties": JSONDepth.maximum,
                "envelope": JSONDepth.envelopeMaximum,
                "journalReader": JSONReader.maximumDepth,
                "journalWriterProperties": JournalLineWriter.maximumDepth,
                "emulator": EmulatorJSON.maximumDepth,
            ]
            let data = (try? JSONSerialization.data(withJSONObject: limits, options: [.sortedKeys])) ?? Data()
            print(String(decoding: data, as: UTF8.self))
            return 0
        }
        guard arguments.count == 3, let path = paths[arguments[0]], let shape = Shape(rawValue: arguments[1]),
            let depth = Int(arguments[2]), depth >= 3
        else {
            let names = paths.keys.sorted().joined(separator: "|")
            FileHandle.standardError.write(Data("usage: segments-bench stack-probe (\(names)) (object|array) DEPTH≥3\n".utf8))
            return 2
        }
        let finished = DispatchSemaphore(value: 0)
        let outcome = ProbeOutcome()
        let thread = Thread {
            do {
                try path(shape, depth)
            } catch {
                outcome.failure = "\(error)"
            }
            finished.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        guard finished.wait(timeout: .now() + 120) == .success else {
            FileHandle.standardError.write(Data("stack-probe: no answer within 120 s\n".utf8))
            return 4
        }
        if let failure = outcome.failure {
            FileHandle.standardError.write(Data("stack-probe: threw \(failure)\n".utf8))
            return 3
        }
        return 0
    }

    /// `depth` levels of the shape, with a string at the bottom.
    private static func text(_ shape: Shape, _ depth: Int) -> Data {
        switch shape {
        case .object:
            Data((String(repeating: #"{"k":"#, count: depth - 1) + #"{"k":"v"}"# + String(repeating: "}", count: depth - 1)).utf8)
        case .array:
            Data((String(repeating: "[", count: depth) + #""v""# + String(repeating: "]", count: depth)).utf8)
        }
    }

    /// An event whose properties nest `levels` deep (the properties object is level 1).
    private static func event(_ shape: Shape, _ levels: Int) -> TrackedEvent {
        var value: JSONValue = .string("v")
        for _ in 0..<max(0, levels - 1) {
            value = shape == .object ? .object(["k": value]) : .array([value])
        }
        return TrackedEvent(
            kind: .event(type: "probe"), customerIds: CustomerIds(cookie: "c"), properties: ["k": value],
            timestamp: Date(timeIntervalSince1970: 0))
    }
}

/// What the probe threw: written by the probe thread before it signals, read after the wait.
private final class ProbeOutcome: @unchecked Sendable {
    var failure: String?
}
