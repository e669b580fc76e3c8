// The `segments` executable: only the entry point. The commands are the `SegmentsCommandLine`
// library (Sources/CLI/Commands), so that no test target links code that reads the process's
// arguments (see `SegmentsCommand`).
import SegmentsCommandLine

await SegmentsCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
