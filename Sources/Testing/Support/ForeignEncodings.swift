import Foundation

/// JSON texts in encodings other than UTF-8, for testing that a decoder refuses them before it
/// parses (Behaviour P7 in `Docs/Behaviour.md`).
///
/// Foundation's `JSONDecoder` and `JSONSerialization` recognise UTF-16 and UTF-32 and convert them,
/// so a nesting check that scans the bytes as UTF-8 can be fooled: ``deeplyNested(levels:)``
/// starts with a string holding U+0122, whose UTF-16LE bytes `22 01` end a byte scanner's string
/// early. Use these to test your own ``SegmentRepository`` or decoder the way the SDK tests its own:
///
/// ```swift
/// for sample in ForeignEncodings.samples(of: ForeignEncodings.deeplyNested(levels: 500)) {
///     let refused = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
///         (try? MyDecoder.decode(sample.data)) == nil
///     }
///     #expect(refused, "\(sample.name)")
/// }
/// ```
public enum ForeignEncodings {
    /// One text in one encoding.
    public struct Sample: Sendable, CustomStringConvertible {
        /// The encoding's name, for test messages: `UTF-16LE`, `UTF-32BE`, `UTF-16LE with BOM`….
        public let name: String
        /// The encoded bytes.
        public let data: Data

        /// A sample of your own: `name` for test messages, `data` the bytes.
        public init(name: String, data: Data) {
            self.name = name
            self.data = data
        }

        /// The encoding's name.
        public var description: String { name }
    }

    /// `["Ģ",[[[…]]]]`: a string whose UTF-16LE form hides a quote, then `levels` nested arrays.
    /// Wrap it in an object with `key` to give it a decoder's expected top level (`{"key": …}`).
    public static func deeplyNested(levels: Int, inside key: String? = nil) -> String {
        let arrays = #"["Ģ","# + String(repeating: "[", count: levels) + String(repeating: "]", count: levels) + "]"
        guard let key else { return arrays }
        return #"{"\#(key)":"# + arrays + "}"
    }

    /// `text` in UTF-16LE, UTF-16BE, UTF-32LE and UTF-32BE without a byte-order mark, and in
    /// UTF-16LE, UTF-16BE and UTF-32LE after one.
    public static func samples(of text: String) -> [Sample] {
        let utf16 = Array(text.utf16)
        let utf32 = text.unicodeScalars.map(\.value)
        let le16 = utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let be16 = utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let le32 = utf32.flatMap { value in (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        let be32 = utf32.flatMap { value in (0..<4).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) } }
        return [
            Sample(name: "UTF-16LE", data: Data(le16)),
            Sample(name: "UTF-16BE", data: Data(be16)),
            Sample(name: "UTF-32LE", data: Data(le32)),
            Sample(name: "UTF-32BE", data: Data(be32)),
            Sample(name: "UTF-16LE with BOM", data: Data([0xFF, 0xFE] + le16)),
            Sample(name: "UTF-16BE with BOM", data: Data([0xFE, 0xFF] + be16)),
            Sample(name: "UTF-32LE with BOM", data: Data([0xFF, 0xFE, 0x00, 0x00] + le32)),
        ]
    }
}
