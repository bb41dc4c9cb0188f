#!/bin/bash
# Grade a class over a Slurm job array: one array task per shard, then one merge job.
#
#   sbatch deploy/slurm-array.sh /path/to/class /path/to/results
#
# Slurm numbers the tasks from --array's first index (0 here) in SLURM_ARRAY_TASK_ID and
# says how many there are in SLURM_ARRAY_TASK_COUNT; graphgrade's shards are 1..N, hence
# the +1. Change the number of shards by changing --array only.
#
# Run it as root inside a container (Apptainer/Singularity with --fakeroot, or the image of
# deploy/Dockerfile's private with-specs target, or pass --specs): as a normal user every worker shares your uid, so without Landlock one
# submission could read the others, the specs and the observation cache (graphgrade warns).
#SBATCH --job-name=graphgrade
#SBATCH --array=0-3
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=01:00:00
#SBATCH --output=graphgrade-%A_%a.log
set -euo pipefail

CLASS=${1:?usage: sbatch slurm-array.sh CLASS_DIR RESULTS_DIR}
RESULTS=${2:?usage: sbatch slurm-array.sh CLASS_DIR RESULTS_DIR}
K=$((SLURM_ARRAY_TASK_ID + 1))
N=${SLURM_ARRAY_TASK_COUNT}

graphgrade grade "$CLASS"/* --shard "$K/$N" --out "$RESULTS/shard-$K" --jobs "${SLURM_CPUS_PER_TASK:-2}" --no-cache

# The last task to start queues the merge, to run once every task of the array succeeded.
if [ "$K" -eq "$N" ]; then
  shards=$(seq -f "$RESULTS/shard-%g" 1 "$N" | tr '\n' ' ')
  sbatch --dependency="afterok:${SLURM_ARRAY_JOB_ID}" --job-name=graphgrade-merge \
    --wrap="graphgrade merge $shards --out $RESULTS/class"
fi
