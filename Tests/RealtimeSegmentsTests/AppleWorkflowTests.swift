import Foundation
import SegmentsTesting
import Testing

/// The Apple workflow cannot run here, but what it promises can be read (issue 34, items 3 and 12):
/// a failing command before a pipe fails its step, and the libraries are built as an app extension
/// builds them (Behaviour P12).
@Suite(Hang.timeLimit(minutes: 1)) struct AppleWorkflowTests {
    private static func workflow() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent(".github/workflows/apple.yml"), encoding: .utf8)
    }

    /// The `run:` blocks of the workflow: each `run: |` with its indented lines.
    private static func runBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        var indent = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let leading = line.prefix { $0 == " " }.count
            if var block = current {
                if line.trimmingCharacters(in: .whitespaces).isEmpty || leading > indent {
                    block.append(line)
                    current = block
                    continue
                }
                blocks.append(block.joined(separator: "\n"))
                current = nil
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("run: |") || trimmed.hasPrefix("- run: |") {
                current = []
                indent = leading
            } else if trimmed.hasPrefix("run: ") {
                blocks.append(String(trimmed.dropFirst("run: ".count)))
            }
        }
        if let current { blocks.append(current.joined(separator: "\n")) }
        return blocks
    }

    @Test func ci_aStepThatPipesAFailingCommandFailsAndEveryShellIsBash() throws {
        let text = try Self.workflow()
        // GitHub runs `shell: bash` as `bash -eo pipefail`; its default shell (`bash -e`) would let
        // `swift build | tee log` pass when the build fails.
        #expect(text.contains("defaults:\n  run:\n    shell: bash\n"))
        let blocks = Self.runBlocks(text)
        #expect(blocks.count > 5, "the run blocks were found")
        let piped = blocks.filter { $0.contains("| tee") || $0.contains("|tee") }
        #expect(!piped.isEmpty)
        for block in piped {
            #expect(block.contains("set -o pipefail"), "a piped step without pipefail:\n\(block)")
        }
    }

    @Test func p12_theLibraryIsBuiltAsAnAppExtensionBuildsIt() throws {
        let text = try Self.workflow()
        let blocks = Self.runBlocks(text).filter { $0.contains("APPLICATION_EXTENSION_API_ONLY=YES") }
        #expect(blocks.count == 1)
        #expect(blocks.first?.contains("-scheme RealtimeSegments") == true)
    }
}
