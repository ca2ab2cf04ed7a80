"""Pricing beyond one process (docs/layout.md's ``distributed/``): a book placed on Dask workers
(:mod:`.placement`), the tasks run there (:mod:`.tasks`), the executor that prices on them and the stateless chunk
function (:mod:`.pricing`), calls straight to the workers (:mod:`.worker_calls`), results in shared memory
(:mod:`.shared_results`), the workers' set-up (:mod:`.worker_tuning`) and a Parquet book priced file to file
(:mod:`.parquet_files`). The names below are those of the former ``trinom.distributed`` module."""

from .placement import SHARDS_PER_THREAD, DistributedBook, choose_split, distribute, placed_book, scatter_count, shards_by_work
from .pricing import price_chunk, price_locally, price_on
from .tasks import engine_of, price_placed, price_spreads_placed, price_trees, solve_spreads_placed

__all__ = ["SHARDS_PER_THREAD", "DistributedBook", "choose_split", "distribute", "engine_of",
           "placed_book", "price_chunk", "price_locally", "price_on", "price_placed", "price_spreads_placed", "price_trees",
           "scatter_count", "shards_by_work", "solve_spreads_placed"]
