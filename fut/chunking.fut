-- Sorting options by tree height and bin-packing them into chunks of a fixed flat width,
-- with flat parallel operators only (used by fut/trinom-flat.fut).

-- | Stable ascending sort of `xs` by a non-negative integer key: least-significant-digit
-- radix sort, one bit a pass, over the bits that the largest key needs.
def radix_sort_by_key [n] 't (key: t -> i64) (xs: [n]t) : [n]t =
  let max_key = reduce i64.max 0 (map key xs)
  let num_bits = 64 - i64.clz max_key
  in loop xs for b < num_bits do
       let bits = map (\x -> (key x >> i64.i32 b) & 1) xs
       let zeros_upto = scan (+) 0 (map (1 -) bits)
       let ones_upto = scan (+) 0 bits
       let num_zeros = if n == 0 then 0 else zeros_upto[n - 1]
       let dest = map3 (\bit z o -> if bit == 0 then z - 1 else num_zeros + o - 1)
                       bits zeros_upto ones_upto
       in scatter (copy xs) dest xs

-- | Items per packing segment: first-fit runs sequentially inside each run of this many
-- consecutive items and in parallel across runs.
def pack_segment_length : i64 = 256

-- | First-fit bin packing of items (in the given order) into chunks of room `capacity`,
-- done independently in consecutive runs of `pack_segment_length` items: each item goes
-- into the first chunk of its run that still has room, or opens a new chunk.  Every width
-- must be at most `capacity`.  Returns, per item, its chunk (chunks are numbered run by
-- run, in opening order) and its offset inside the chunk (the room already used when it
-- came), and the number of chunks.  With the items sorted by decreasing height this is
-- first-fit-decreasing by height: a chunk's height is that of its first item, and the
-- chunks come out in non-increasing height.
def first_fit_runs [m] (capacity: i64) (widths: [m]i64) : ([m]i64, [m]i64, i64) =
  let L = pack_segment_length
  let num_runs = (m + L - 1) / L
  let (local_chunks, offsets, opened) =
    unzip3 (map (\r ->
      let start = r * L
      let len = i64.min L (m - start)
      let (_, opened, chunk_of, offset_of) =
        loop (used, opened, chunk_of, offset_of) =
             (replicate L 0i64, 0i64, replicate L 0i64, replicate L 0i64)
        for k < len do
          let width = widths[start + k]
          let c = loop c = 0 while c < opened && capacity - used[c] < width do c + 1
          let offset_of[k] = if c == opened then 0 else used[c]
          let used[c] = offset_of[k] + width
          let chunk_of[k] = c
          in (used, if c == opened then opened + 1 else opened, chunk_of, offset_of)
      in (chunk_of, offset_of, opened)) (iota num_runs))
  let first_chunk = map2 (-) (scan (+) 0 opened) opened
  let chunks = flatten (map2 (\base cs -> map (+ base) cs) first_chunk local_chunks)
  let num_chunks = i64.sum opened
  in (take m chunks, take m (flatten offsets), num_chunks)
