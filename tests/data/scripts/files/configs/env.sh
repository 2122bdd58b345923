# sourced by llamafactory_lora.sh
export HF_HOME=/scratch/$USER/hf
RECIPE=qwen_lora_sft
