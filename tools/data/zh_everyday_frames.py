#!/usr/bin/python3
"""Synthetic everyday Chinese sentences for the character LM (issue #33, item 6): sentence frames and word lists
written for this project, filled at random with a fixed seed. NOT from any package, and not real text.

    /usr/bin/python3 tools/data/zh_everyday_frames.py [--sentences 40000] [--seed 33]

Writes build/zh/everyday/frames/frames.train.txt and .heldout.txt (documents of 3-6 sentences separated by
"\\n%\\n", the format lm_data.load_prose reads; 5% held out by content hash). Not in git.

Why it exists. Debian ships no everyday Chinese sentences about family, home, food, school or travel (what it has,
tools/data/zh_everyday_data.py, is children's software and one 1924 story), and training on that text alone left the
held-out everyday sentences at 6.3 nats/char (tools/records/char-lm-everyday.md has the runs). The 390 common
characters that our real text lacks were seen only in lists of words joined by 、; these frames put the everyday
ones into sentences.

How it stays apart from the held-out sentences (tools/data/zh_everyday_heldout.py, written before these frames): the
frames were written without copying them, and every generated sentence that shares a character 8-gram with a
held-out sentence is dropped (the count is printed and recorded). The frames avoid the demo's example prompts
(妈妈说晚饭做好了…), so the demo shows what the model learnt, not a sentence it was shown.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/ (tools/README.md, "Imports")
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools.paths import ROOT  # noqa: E402
from data import lm_data, zh_everyday_heldout  # noqa: E402

OUT = os.path.join(ROOT, "build", "zh", "everyday", "frames")

WORDS = {
    "fam": "妈妈 爸爸 奶奶 爷爷 外婆 外公 哥哥 姐姐 弟弟 妹妹 叔叔 阿姨 舅舅 姑姑 儿子 女儿 孩子 妻子 丈夫 表哥 小明 小红 小王 老李",
    "oth": "老师 同学 朋友 邻居 医生 司机 老板 同事 服务员 警察 校长 客人 小朋友 售货员 大夫",
    "pron": "我 你 他 她 我们 你们 他们 她们 大家 咱们",
    "time": "今天 明天 昨天 后天 早上 上午 中午 下午 晚上 周末 星期一 星期二 星期三 星期四 星期六 星期天 每天 现在 刚才 "
            "上个月 下个星期 去年 明年 春节 国庆节 假期里 放学后 吃完饭以后",
    "place": "学校 公园 超市 医院 商店 银行 图书馆 饭店 车站 火车站 公司 市场 邮局 动物园 电影院 体育馆 书店 菜市场 "
             "游泳池 农村 城里 奶奶家 朋友家 教室 办公室 操场 食堂 宿舍",
    "room": "厨房 客厅 卧室 阳台 院子 楼下 门口 床上 桌子上 书架上 柜子里 房间里",
    "food": "米饭 面条 包子 馒头 鸡蛋 牛奶 水果 苹果 香蕉 西瓜 蛋糕 面包 青菜 鱼 牛肉 鸡肉 豆腐 饼干 黄瓜 土豆 葡萄 "
            "橘子 饭 菜 粥 面包 羊肉 白菜 桃子 巧克力",
    "drink": "茶 咖啡 果汁 水 热水 可乐 豆浆 啤酒 汤",
    "meal": "早饭 午饭 晚饭 早餐 午餐 晚餐 夜宵",
    "thing": "书 本子 笔 书包 手机 电脑 钥匙 雨伞 衣服 鞋子 帽子 杯子 碗 筷子 椅子 桌子 电视 冰箱 自行车 照片 礼物 钱包 "
             "眼镜 毛巾 被子 玩具 报纸 杂志 地图 车票 球 裙子 围巾 手表",
    "veh": "公共汽车 地铁 火车 飞机 出租车 自行车 船 汽车 高铁 电动车",
    "act": "看书 写作业 看电视 打篮球 踢足球 唱歌 跳舞 画画 做饭 洗衣服 打扫房间 买东西 散步 跑步 游泳 睡觉 上网 玩游戏 "
           "听音乐 打电话 洗碗 买菜 上班 上课 复习 弹琴 钓鱼 爬山 逛街 开会 看病 休息 聊天 写信 拍照 种花",
    "adj": "好 冷 热 累 忙 高兴 开心 干净 漂亮 便宜 贵 好吃 舒服 安静 热闹 难 容易 远 近 大 小 新 旧 快 慢 甜 辣 香",
    "feel": "高兴 开心 难过 生气 着急 害怕 紧张 满意 失望 累 饿 渴 困",
    "city": "北京 上海 广州 南京 杭州 西安 成都 天津 武汉 深圳 重庆 青岛 苏州 昆明 长沙 香港",
    "weather": "下雨 下雪 刮风 出太阳 阴天 很冷 很热 很暖和 很凉快",
    "animal": "小狗 小猫 小鸟 兔子 金鱼 小鸡 鸭子 熊猫 猴子",
    "num": "一 两 三 四 五 六 七 八 九 十 几",
    "body": "头 肚子 牙 嗓子 腿 眼睛 手",
    "color": "红色 蓝色 白色 黑色 黄色 绿色",
    "study": "语文 数学 英语 历史 音乐 体育 美术 科学",
}
WORDS = {k: v.split() for k, v in WORDS.items()}
WORDS["who"] = WORDS["fam"] + WORDS["oth"] + WORDS["pron"]

FRAMES = [
    "{time}{who}要去{place}。", "{who}在{place}{act}。", "{time}我们一起去{place}吧。", "{who}正在{room}{act}。",
    "{fam}每天{time}都{act}。", "{who}喜欢吃{food}，不喜欢吃{food}。", "{time}{fam}给我们做了{food}。",
    "{meal}吃{food}和{food}。", "{who}想喝一杯{drink}。", "{fam}去{place}买了一些{thing}。",
    "{thing}在{room}，你自己去拿吧。", "我的{thing}找不到了，你看见了吗？", "{who}坐{veh}去{city}。",
    "从家到{place}要坐{num}站{veh}。", "{time}{city}{weather}，记得多穿点衣服。", "{time}天气{adj}，我们去{place}{act}吧。",
    "{who}觉得{adj}，想早点回家。", "{fam}问我{meal}想吃什么。", "{who}{time}有空吗？我们去{act}吧。",
    "你喜欢{act}吗？", "{place}离这儿远不远？", "这个{thing}多少钱？", "{food}多少钱一斤？", "{who}在哪儿？",
    "“你去哪儿？”“我去{place}。”", "“你在干什么？”“我在{act}。”", "{fam}说{time}要带我们去{city}玩。",
    "{time}是{fam}的生日，我们给{pron}买了一个{food}。", "{animal}在{room}睡觉。", "我家有一只{animal}，它很{adj}。",
    "{who}的{body}疼，要去医院看病。", "医生让{who}多喝水，早点睡觉。", "{who}今天很{feel}，因为{who}要来我家。",
    "{study}课上，老师让我们{act}。", "这次{study}考试{who}考得很好。", "下课以后，{oth}和我一起{act}。",
    "{who}每天骑{veh}去上班。", "{time}我要早点起床，去{place}。", "{fam}把{thing}放在{room}了。",
    "请把{thing}拿给{fam}。", "{fam}在{room}等你，快去吧。", "{who}买了一件{color}的衣服。",
    "{time}家里来了客人，{fam}忙着做{meal}。", "吃完{meal}，{fam}去{act}了。", "{fam}让我去{place}买{food}。",
    "{who}累了，先在{room}休息一会儿。", "{time}{who}没去{place}，因为{weather}。", "我和{fam}一起{act}。",
    "{fam}的{thing}是新买的，很{adj}。", "{place}里人很多，很{adj}。", "{who}{time}回来，你别担心。",
    "{fam}打电话说{time}不回家吃{meal}了。", "我们坐{veh}去{city}看{fam}。", "{fam}住在{city}，离我们家很远。",
    "{who}饿了，想吃点{food}。", "这家饭店的{food}很{adj}。", "{who}不会{act}，想跟{oth}学。",
    "周末我常常和{fam}去{place}。", "{fam}教我{act}。", "{who}一边{act}一边{act}。",
]


def heldout_grams(n=8):
    return {s[i:i + n] for _, s in zh_everyday_heldout.sentences() for i in range(len(s) - n + 1)}


def generate(count, seed):
    """-> (documents, sentences dropped for sharing an 8-gram with a held-out sentence)."""
    rng = np.random.RandomState(seed)
    grams = heldout_grams()
    sentences, dropped = [], 0
    while len(sentences) < count:
        frame = FRAMES[rng.randint(len(FRAMES))]
        parts = frame.split("{")
        s = parts[0]
        for p in parts[1:]:
            slot, rest = p.split("}", 1)
            words = WORDS[slot]
            s += words[rng.randint(len(words))] + rest
        if any(s[i:i + 8] in grams for i in range(len(s) - 7)):
            dropped += 1
            continue
        sentences.append(s)
    docs, i = [], 0
    while i < len(sentences):
        k = rng.randint(3, 7)
        docs.append("".join(sentences[i:i + k]))
        i += k
    return docs, dropped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=33)
    args = ap.parse_args()
    docs, dropped = generate(args.sentences, args.seed)
    docs = list(dict.fromkeys(docs))
    os.makedirs(OUT, exist_ok=True)
    train, held = lm_data.write_prose(OUT, "frames", docs)
    print(f"{len(FRAMES)} frames, {args.sentences} sentences in {len(docs)} documents ({len(train)} train, {len(held)} "
          f"held out, {sum(map(len, train))} train characters); {dropped} sentences dropped for sharing an 8-gram with a "
          "held-out everyday sentence")


if __name__ == "__main__":
    main()
