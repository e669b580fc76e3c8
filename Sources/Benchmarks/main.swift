print("segments-bench: the benchmarks land with the performance issue (#7).")
