#!/usr/bin/env bash
# On the lent GPU machine (no network): install the carried wheels and Futhark (.carry, from
# ../shared/tools/prepare-device-carry.sh), build the libraries for the targets named in $TARGETS (default: cuda and
# multicore), and unpack the data the GPU tests read. Source it from the project root:
#   source tools/device_session.sh; python3 -m pytest -m gpu ...
export PYTHONUNBUFFERED=1
source .carry/activate.sh
export PYTHONPATH=$PWD/python:$PYTHONPATH
mkdir -p "${OUT:-/tmp/out}"
(python3 tools/make_data.py --out data > "${OUT:-/tmp/out}/data.log" 2>&1; echo "data: exit $?" >> "${OUT:-/tmp/out}/data.log") &
data_pid=$!
start=$SECONDS
for target in ${TARGETS:-cuda multicore}; do
  python3 build.py --only "$target" --jobs 8 > "${OUT:-/tmp/out}/build-$target.log" 2>&1 || { echo "build $target failed"; tail -40 "${OUT:-/tmp/out}/build-$target.log"; }
done
echo "built in $((SECONDS - start)) s"
wait $data_pid; tail -1 "${OUT:-/tmp/out}/data.log"
