--[[
A site-style job_submit.lua: the peer fmte's cost inside slurmctld is compared with
(scripts/ctld_cost.sh). It does what GPU sites commonly do at submission, written for this benchmark:
require a time limit within the partition's maximum, map untyped GPU requests of the gpu partition
to the site's GPU type, refuse GPU jobs without GPUs on GPU partitions, look for a few training
frameworks in the batch script to tag the job, set a default account comment, and log one line per
job.
--]]

local MAX_MINUTES = { gpu = 2880, debug = 60 }
local FRAMEWORKS = { "torchrun", "accelerate launch", "deepspeed", "pretrain_gpt.py", "llamafactory-cli" }

local function gpu_count(tres)
  if tres == nil then return 0 end
  local n = string.match(tres, "gpu:[%w_]*:?(%d+)")
  return tonumber(n) or 0
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local partition = job_desc.partition or "gpu"
  local limit = job_desc.time_limit
  local max = MAX_MINUTES[partition] or 1440
  if limit == nil or limit == slurm.NO_VAL or limit == 0 or limit > max then
    job_desc.time_limit = max
  end

  local gpus = gpu_count(job_desc.tres_per_node) + gpu_count(job_desc.tres_per_job)
  if partition == "gpu" and gpus == 0 and job_desc.script ~= nil
     and string.find(job_desc.script, "torchrun", 1, true) then
    slurm.log_user("GPU partition job without a GPU request")
    return slurm.ERROR
  end
  if job_desc.tres_per_node ~= nil and string.match(job_desc.tres_per_node, "^gres:gpu:%d+$") then
    job_desc.tres_per_node = string.gsub(job_desc.tres_per_node, "^gres:gpu:", "gres:gpu:a100:")
  end

  local tag = "other"
  if job_desc.script ~= nil then
    for _, f in ipairs(FRAMEWORKS) do
      if string.find(job_desc.script, f, 1, true) then
        tag = f
        break
      end
    end
  end
  if job_desc.comment == nil then
    job_desc.comment = "site:" .. tag
  end
  slurm.log_info("job_submit.lua: uid %u partition %s gpus %d tag %s", submit_uid, partition, gpus, tag)
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
